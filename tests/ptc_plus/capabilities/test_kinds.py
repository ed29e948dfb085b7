"""The table of capability kinds (ADR 0122): every kind has one row, what the catalog builds agrees with it,
the delivery follows its order, and a plan still persists each kind as the string it always wrote.

``tests/data/golden/plan_kinds.json`` holds the bytes of the plan below as the code before the table wrote them
(commit 862463c, ``plan_bytes``): one capability of each kind and one the host does not offer.
"""

from __future__ import annotations

from pathlib import Path

import attrs
import orjson
import pytest
from cattrs.errors import ClassValidationError

from hookspecs import SkillSpec, ToolSpec
from ptc_plus.capabilities import (
    KINDS,
    CapabilityKind,
    Catalog,
    Delivery,
    Reach,
    ResourceEntry,
    ResourceSource,
    build_catalog,
    delivery_text,
    kind_row,
    kinds_delivered,
    kinds_reached,
    observed_kinds,
    offline_counter,
    tool_kind,
)
from ptc_plus.config import load_config
from ptc_plus.plan import CapabilityPlan, plan_bytes, plan_from_json, plan_to_json
from ptc_plus.session.provision import session_plan

GOLDEN = Path(__file__).parents[2] / "data" / "golden" / "plan_kinds.json"


def _catalog() -> Catalog:
    return build_catalog(
        tools=[
            ToolSpec(
                name="read_file",
                description="Read a file.",
                input_schema={"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
                source="host",
            ),
            ToolSpec(name="create_issue", description="Open an issue.", source="mcp:github"),
        ],
        skills=[SkillSpec(name="pdf", description="Work with PDF files.", source="skills", loader="load_skill")],
        resources=[ResourceSource(server="github", entries=(ResourceEntry(name="readme", uri="file:///README"),))],
        cache=None,
    )


def _plan(workspace: Path) -> CapabilityPlan:
    (workspace / ".ptc-plus").mkdir()
    (workspace / ".ptc-plus" / "config.toml").write_text('[capabilities."host:gone"]\ndisclosure = "full"\n')
    loaded = load_config(workspace, env={}, user_file=workspace / "none.toml")
    return session_plan(_catalog(), loaded, offline_counter())


def test_every_kind_has_exactly_one_row_and_distinct_prefixes() -> None:
    assert list(KINDS) == list(CapabilityKind)
    assert all(row.kind is kind for kind, row in KINDS.items())
    prefixes = [row.prefix for row in KINDS.values()]
    assert len(set(prefixes)) == len(prefixes)
    assert [row.prefix for row in KINDS.values() if not row.prefix] == [""]  # one kind takes its source's identity
    assert kinds_delivered(Delivery.STUB) | kinds_delivered(Delivery.CATALOG_LINE) | kinds_delivered(
        Delivery.LISTING
    ) == set(CapabilityKind)
    assert kinds_reached(Reach.TOOL_NAME) == kinds_delivered(Delivery.STUB)
    assert observed_kinds() == {CapabilityKind.TOOL, CapabilityKind.MCP_TOOL, CapabilityKind.SKILL}


def test_what_the_catalog_builds_carries_its_rows_prefix() -> None:
    catalog = _catalog()
    kinds = {c.identity: c.kind for c in catalog.capabilities}
    assert kinds == {
        "host:read_file": CapabilityKind.TOOL,
        "mcp:github/create_issue": CapabilityKind.MCP_TOOL,
        "skill:pdf": CapabilityKind.SKILL,
        "mcp-resources:github": CapabilityKind.MCP_RESOURCES,
    }
    for capability in catalog.capabilities:
        row = KINDS[capability.kind]
        assert capability.identity.startswith(row.prefix)
        # No other row claims the identity with a longer prefix: the table alone says which kind it is.
        longer = [
            r for r in KINDS.values() if len(r.prefix) > len(row.prefix) and capability.identity.startswith(r.prefix)
        ]
        assert longer == []
    assert tool_kind("mcp:github") is CapabilityKind.MCP_TOOL
    assert tool_kind("host") is tool_kind("plugin:ptc_plus") is tool_kind("mcp") is CapabilityKind.TOOL


def test_a_delivery_puts_its_blocks_in_the_tables_order() -> None:
    catalog = _catalog()
    text = delivery_text(catalog.capabilities)
    stub = text.index("def read_file")
    skill, listing = (text.index("# skill pdf"), text.index("# ── mcp-resources:github"))
    assert stub < skill < listing
    assert delivery_text(tuple(reversed(catalog.capabilities))) == text


def test_a_plan_persists_each_kind_as_the_string_it_always_wrote(tmp_path: Path) -> None:
    plan = _plan(tmp_path)
    golden = GOLDEN.read_bytes()
    # The config revision hashes the whole config model, so any new config key moves it; what this file
    # pins is every other byte, the kinds' strings among them.
    golden_revision = orjson.loads(golden)["config_revision"]
    assert plan_bytes(plan).replace(plan.config_revision.encode(), golden_revision.encode()) == golden
    assert plan_from_json(orjson.loads(golden)) == attrs.evolve(plan, config_revision=golden_revision)
    assert plan_from_json(plan_to_json(plan)) == plan


def test_a_plan_entrys_kind_is_typed_and_none_for_an_absent_capability(tmp_path: Path) -> None:
    plan = _plan(tmp_path)
    read = plan.entry("host:read_file")
    gone = plan.entry("host:gone")
    assert read is not None and gone is not None
    assert read.kind is CapabilityKind.TOOL
    assert gone.kind is None
    restored = plan_from_json(plan_to_json(plan)).entry("mcp-resources:github")
    assert restored is not None and restored.kind is CapabilityKind.MCP_RESOURCES
    assert kind_row("") is None and kind_row("skill") is KINDS[CapabilityKind.SKILL]


def test_a_kind_no_row_has_is_refused_when_a_plan_is_read(tmp_path: Path) -> None:
    data = plan_to_json(_plan(tmp_path))
    data["entries"][0]["kind"] = "wormhole"
    with pytest.raises(ClassValidationError, match="CapabilityPlan"):
        plan_from_json(data)
