"""Which samples still count after a capability's contract revision changed (ADR 0066)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hookspecs.types import SkillSpec, ToolSpec
from ptc_plus.capabilities import ResourceEntry, ResourceSource, build_catalog
from ptc_plus.statistics import (
    Evidence,
    FamilySample,
    carries_over,
    schema_revision_of,
    tool_schema_revision,
    workspace_store,
)

BASE: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "File to read."},
        "limit": {"type": "integer", "description": "Max bytes.", "default": 100},
    },
    "required": ["path"],
}


def tool(schema: dict[str, Any], description: str = "Read a file.", source: str = "host") -> ToolSpec:
    return ToolSpec(name="read_file", description=description, input_schema=schema, source=source)


def capability(spec: ToolSpec):  # type: ignore[no-untyped-def]
    (entry,) = build_catalog(tools=[spec]).capabilities
    return entry


def with_(schema: dict[str, Any], **changes: Any) -> dict[str, Any]:
    import copy

    changed = copy.deepcopy(schema)
    for key, value in changes.items():
        changed[key] = value
    return changed


def edited_description() -> dict[str, Any]:
    schema = with_(BASE)
    schema["properties"]["path"]["description"] = "The path of the file, relative to the workspace."
    schema["properties"]["path"]["examples"] = ["README.md"]
    schema["properties"]["limit"]["default"] = 4096
    schema["title"] = "ReadFile"
    return schema


def optional_added() -> dict[str, Any]:
    schema = with_(BASE)
    schema["properties"]["encoding"] = {"type": "string"}
    return schema


def required_added() -> dict[str, Any]:
    return with_(BASE, required=["path", "limit"])


def required_retyped() -> dict[str, Any]:
    schema = with_(BASE)
    schema["properties"]["path"] = {"type": "array", "items": {"type": "string"}}
    return schema


def required_renamed() -> dict[str, Any]:
    schema = with_(BASE, required=["file"])
    schema["properties"]["file"] = schema["properties"].pop("path")
    return schema


@pytest.mark.parametrize(
    ("name", "schema", "description", "carries"),
    [
        ("description-only", BASE, "Read a whole text file from the workspace.", True),
        ("parameter-text", edited_description(), "Read a file.", True),
        ("optional-parameter-added", optional_added(), "Read a file.", True),
        ("required-parameter-added", required_added(), "Read a file.", False),
        ("required-parameter-retyped", required_retyped(), "Read a file.", False),
        ("required-parameter-renamed", required_renamed(), "Read a file.", False),
    ],
)
def test_carry_over_by_kind_of_change(name: str, schema: dict[str, Any], description: str, carries: bool) -> None:
    old = capability(tool(BASE))
    new = capability(tool(schema, description))
    assert old.revision != new.revision, name  # every case is a new contract revision
    assert (
        carries_over(
            stored_revision=old.revision,
            stored_schema_revision=schema_revision_of(old),
            revision=new.revision,
            schema_revision=schema_revision_of(new),
        )
        is carries
    ), name


def test_the_store_applies_the_rule(tmp_path: Path) -> None:
    old = capability(tool(BASE))
    text_edit = capability(tool(BASE, "Read a whole text file."))
    incompatible = capability(tool(required_added()))
    store = workspace_store(tmp_path)
    for n in range(3):
        store.record(
            FamilySample(
                family_id=f"f{n}",
                workspace=str(tmp_path),
                plan_config_revision="c",
                evidence=(
                    Evidence(
                        identity=old.identity,
                        revision=old.revision,
                        schema_revision=schema_revision_of(old),
                        disclosure="full",
                        used=n > 0,
                    ),
                ),
            )
        )
    view = store.read()

    def stats(c, schema_revision: str):  # type: ignore[no-untyped-def]
        return view.stats(c.identity, c.revision, window=20, min_samples=1, schema_revision=schema_revision)

    assert stats(text_edit, schema_revision_of(text_edit)).used == 2  # carried over
    assert stats(incompatible, schema_revision_of(incompatible)).coverage is None  # starts fresh: no sample
    assert stats(text_edit, "").coverage is None  # schema revision unknown: only the exact revision counts
    assert stats(old, "").used == 2


def test_the_same_name_from_another_source_is_another_capability(tmp_path: Path) -> None:
    host = capability(tool(BASE))
    mcp = capability(tool(BASE, source="mcp:files"))
    assert host.identity != mcp.identity
    assert schema_revision_of(host) == schema_revision_of(mcp)  # same shape, yet never the same samples
    store = workspace_store(tmp_path)
    store.record(
        FamilySample(
            family_id="f",
            workspace=str(tmp_path),
            plan_config_revision="c",
            evidence=(
                Evidence(
                    identity=host.identity,
                    revision=host.revision,
                    schema_revision=schema_revision_of(host),
                    disclosure="full",
                    used=True,
                ),
            ),
        )
    )
    view = store.read()
    assert (
        view.stats(
            mcp.identity, mcp.revision, window=5, min_samples=1, schema_revision=schema_revision_of(mcp)
        ).coverage
        is None
    )


def test_skills_and_resource_sources_always_carry_over() -> None:
    before = build_catalog(
        skills=[SkillSpec(name="pdf", description="Work with PDFs.")],
        resources=[ResourceSource(server="docs", entries=(ResourceEntry(name="guide", uri="docs://guide"),))],
    )
    after = build_catalog(
        skills=[SkillSpec(name="pdf", description="Fill, merge and split PDF files.")],
        resources=[
            ResourceSource(
                server="docs",
                entries=(ResourceEntry(name="guide", uri="docs://guide"), ResourceEntry(name="faq", uri="docs://faq")),
            )
        ],
    )
    for old, new in zip(before.capabilities, after.capabilities, strict=True):
        assert old.identity == new.identity and old.revision != new.revision
        assert schema_revision_of(old) == schema_revision_of(new)


def test_schema_revision_ignores_key_order_and_annotations_only() -> None:
    reordered = {"required": ["path"], "properties": {"limit": BASE["properties"]["limit"], "path": {"type": "string"}}}
    reordered["type"] = "object"
    assert tool_schema_revision(reordered) == tool_schema_revision(BASE)
    constrained = with_(BASE)
    constrained["properties"]["path"]["maxLength"] = 10
    assert tool_schema_revision(constrained) != tool_schema_revision(BASE)
    # A property *named* like an annotation keyword is a parameter, not an annotation.
    named = {"type": "object", "properties": {"description": {"type": "string"}}, "required": ["description"]}
    assert tool_schema_revision(named) != tool_schema_revision({"type": "object", "properties": {}, "required": []})
