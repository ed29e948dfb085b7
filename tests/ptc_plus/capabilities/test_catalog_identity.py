"""Capability identity, revision, kinds and unmanaged marking."""

from __future__ import annotations

import pytest

from hookspecs.types import SkillSpec, ToolSpec
from ptc_plus.capabilities import (
    CapabilityKind,
    ResourceEntry,
    ResourceSource,
    UnmanagedKind,
    build_catalog,
    tool_identity,
)
from ptc_plus.capabilities.errors import DuplicateCapability
from ptc_plus.discovery.snapshot import build_snapshot

READ = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}


def test_identities_per_source_kind() -> None:
    catalog = build_catalog(
        tools=[
            ToolSpec(name="read_file", description="Read.", input_schema=READ),
            ToolSpec(name="read_file", description="Read.", input_schema=READ, source="mcp:fs"),
            ToolSpec(name="lint", description="Lint.", source="plugin:ruff"),
        ],
        skills=[SkillSpec(name="pdf", description="PDF forms.")],
        resources=[
            ResourceSource(server="github", entries=(ResourceEntry(name="repo", uri_template="repo://{name}"),))
        ],
    )
    kinds = {c.identity: c.kind for c in catalog.capabilities}
    assert kinds == {
        "host:read_file": CapabilityKind.TOOL,
        "mcp:fs/read_file": CapabilityKind.MCP_TOOL,
        "plugin:ruff/lint": CapabilityKind.TOOL,
        "skill:pdf": CapabilityKind.SKILL,
        "mcp-resources:github": CapabilityKind.MCP_RESOURCES,
    }
    assert [c.identity for c in catalog.capabilities] == sorted(kinds)


def test_identity_is_stable_while_revision_follows_the_contract() -> None:
    before = build_catalog(tools=[ToolSpec(name="read_file", description="Read.", input_schema=READ)])
    edited = build_catalog(tools=[ToolSpec(name="read_file", description="Read a file.", input_schema=READ)])
    same = build_catalog(
        tools=[ToolSpec(name="read_file", description="Read.", input_schema=dict(reversed(READ.items())))]
    )
    a, b, c = (cat.capabilities[0] for cat in (before, edited, same))
    assert a.identity == b.identity == "host:read_file"
    assert a.revision != b.revision
    assert a.revision == c.revision and a.revision.startswith("sha256:")


def test_skill_contract_is_the_catalog_line_only() -> None:
    skill = build_catalog(skills=[SkillSpec(name="pdf", description="PDF forms.")]).capabilities[0]
    assert "skill pdf: PDF forms." in skill.contract
    assert skill.contract.count("\n") == 2


def test_unmanaged_tools_are_marked_and_never_listed_as_managed() -> None:
    catalog = build_catalog(
        tools=[
            ToolSpec(name="run_code", description="Run a program.", source="plugin:ptc_plus"),
            ToolSpec(name="repl_state", description="REPL state.", source="plugin:ptc_plus"),
            ToolSpec(name="my_helper", description="A user binding.", source="bindings"),
            ToolSpec(name="read_file", description="Read.", input_schema=READ),
        ]
    )
    kinds = {c.identity: c.unmanaged for c in catalog.capabilities}
    assert kinds["plugin:ptc_plus/run_code"] is UnmanagedKind.RUN_CODE
    assert kinds["plugin:ptc_plus/repl_state"] is UnmanagedKind.REPL_STATE
    assert kinds["bindings:my_helper"] is UnmanagedKind.USER_BINDING
    assert [c.identity for c in catalog.managed()] == ["host:read_file"]
    snapshot = build_snapshot(catalog)
    assert [c.identity for c in snapshot.catalog.capabilities] == ["host:read_file"]


def test_duplicate_identity_is_refused() -> None:
    spec = ToolSpec(name="a", description="")
    with pytest.raises(DuplicateCapability) as info:
        build_catalog(tools=[spec, spec])
    assert info.value.code == "PTC-3102"


@pytest.mark.parametrize(
    ("source", "name", "identity"),
    [
        ("host", "x", "host:x"),
        ("mcp:github", "create_issue", "mcp:github/create_issue"),
        ("plugin:p", "t", "plugin:p/t"),
    ],
)
def test_tool_identity(source: str, name: str, identity: str) -> None:
    assert tool_identity(source, name) == identity
