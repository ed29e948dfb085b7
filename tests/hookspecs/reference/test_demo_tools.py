"""The demo toolset through the reference host: confinement, notes, unit conversions, schemas."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import pytest_asyncio

from hookspecs import Concurrency, ResultStatus, ToolResult
from hookspecs.reference import ReferenceHost, Session
from hookspecs.reference.demo_tools import demo_tool_definitions


@pytest_asyncio.fixture
async def session(
    make_reference_host: Callable[..., ReferenceHost], reference_workspace: Path
) -> AsyncIterator[Session]:
    async with make_reference_host(tools=demo_tool_definitions(reference_workspace)) as host:
        yield await host.start_session()


def failed(result: ToolResult, code: str) -> bool:
    return result.status is ResultStatus.ERROR and result.error is not None and result.error.code == code


def test_classes_and_output_schemas(reference_workspace: Path) -> None:
    specs = {d.spec.name: d.spec for d in demo_tool_definitions(reference_workspace)}
    exclusive = {n for n, s in specs.items() if s.concurrency is Concurrency.EXCLUSIVE}
    assert exclusive == {"write_file", "notes_add", "notes_delete"}
    assert set(specs) == exclusive | {"list_files", "read_file", "search_files", "notes_search", "convert_units"}
    for spec in specs.values():
        jsonschema.Draft202012Validator.check_schema(spec.input_schema)
        if spec.output_schema is not None:
            jsonschema.Draft202012Validator.check_schema(spec.output_schema)


# --- files ---------------------------------------------------------------------


@pytest.mark.asyncio
async def test_paths_outside_the_workspace_are_refused(
    session: Session, reference_workspace: Path, tmp_path: Path
) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP SECRET\n")
    os.symlink(secret, reference_workspace / "link.txt")
    os.symlink(tmp_path, reference_workspace / "escape-dir")
    (reference_workspace / "inside.txt").write_text("fine\n")
    os.symlink("inside.txt", reference_workspace / "inner-link.txt")
    for tool, args, code in [
        ("read_file", {"path": "../secret.txt"}, "outside-workspace"),
        ("read_file", {"path": str(secret)}, "outside-workspace"),
        ("list_files", {"path": ".."}, "outside-workspace"),
        ("write_file", {"path": "../planted.txt", "content": "x"}, "outside-workspace"),
        # A symlink is never followed, wherever it leads: it can be repointed between two system calls.
        ("read_file", {"path": "link.txt"}, "symlink"),
        ("read_file", {"path": "escape-dir/secret.txt"}, "symlink"),
        ("read_file", {"path": "inner-link.txt"}, "symlink"),
        ("list_files", {"path": "escape-dir"}, "symlink"),
        ("write_file", {"path": "escape-dir/planted.txt", "content": "x"}, "symlink"),
    ]:
        result = await session.call_tool(tool, args)
        assert failed(result, code), (tool, args, result)
    assert not (tmp_path / "planted.txt").exists()
    assert (await session.call_tool("read_file", {"path": "inside.txt"})).value["lines"] == ["fine"]
    # Listing and searching do not reach through symlinks either.
    searched = await session.call_tool("search_files", {"query": "secret"})
    assert searched.value == {"matches": [], "truncated": False}
    listed = await session.call_tool("list_files", {})
    assert listed.value == {"entries": [{"path": "inside.txt", "bytes": 5}], "truncated": False}


@pytest.mark.asyncio
async def test_list_read_search_and_write(session: Session, reference_workspace: Path) -> None:
    (reference_workspace / "docs").mkdir()
    (reference_workspace / "docs" / "a.md").write_text("Alpha\nbeta ALPHA\n")
    (reference_workspace / "b.txt").write_text("gamma\n")
    (reference_workspace / ".agent-host" / "ignored.txt").write_text("alpha\n")  # host state is never listed
    listed = await session.call_tool("list_files", {})
    assert listed.value == {
        "entries": [{"path": "b.txt", "bytes": 6}, {"path": "docs/a.md", "bytes": 17}],
        "truncated": False,
    }
    only_md = await session.call_tool("list_files", {"pattern": "*.md", "max_entries": 1})
    assert only_md.value == {"entries": [{"path": "docs/a.md", "bytes": 17}], "truncated": False}
    capped = await session.call_tool("list_files", {"max_entries": 1})
    assert capped.value["truncated"] is True

    read = await session.call_tool("read_file", {"path": "docs/a.md", "offset": 1, "limit": 5})
    assert read.value == {"path": "docs/a.md", "lines": ["beta ALPHA"], "total_lines": 2}
    assert failed(await session.call_tool("read_file", {"path": "nope.txt"}), "not-found")

    found = await session.call_tool("search_files", {"query": "alpha"})
    assert found.value["matches"] == [
        {"path": "docs/a.md", "line": 1, "text": "Alpha"},
        {"path": "docs/a.md", "line": 2, "text": "beta ALPHA"},
    ]
    exact = await session.call_tool("search_files", {"query": "ALPHA", "case_sensitive": True, "glob": "*.md"})
    assert [m["line"] for m in exact.value["matches"]] == [2]
    first = await session.call_tool("search_files", {"query": "a", "max_results": 1})
    assert first.value["truncated"] is True and len(first.value["matches"]) == 1

    written = await session.call_tool("write_file", {"path": "new/dir/c.txt", "content": "héllo"})
    assert written.value == {"path": "new/dir/c.txt", "bytes": len("héllo".encode())}
    assert (reference_workspace / "new" / "dir" / "c.txt").read_text(encoding="utf-8") == "héllo"
    assert sorted(p.name for p in (reference_workspace / "new" / "dir").iterdir()) == ["c.txt"]  # no temp left


# --- notes ----------------------------------------------------------------------


@pytest.mark.asyncio
async def test_notes_add_search_and_delete(session: Session, reference_workspace: Path) -> None:
    first = await session.call_tool(
        "notes_add", {"title": "Groceries", "body": "milk, eggs", "tags": ["home", " home", "x"]}
    )
    second = await session.call_tool(
        "notes_add", {"title": "Standup", "body": "ship the milk tracker", "tags": ["work"]}
    )
    assert (first.value, second.value) == ({"id": 1}, {"id": 2})
    assert (reference_workspace / ".demo" / "notes.sqlite").is_file()

    milk = await session.call_tool("notes_search", {"query": "milk"})
    assert [(n["id"], n["title"], n["tags"]) for n in milk.value["notes"]] == [
        (1, "Groceries", ["home", "x"]),
        (2, "Standup", ["work"]),
    ]
    tagged = await session.call_tool("notes_search", {"query": "milk", "tag": "work"})
    assert [n["id"] for n in tagged.value["notes"]] == [2]
    # A tag matches whole tags only.
    assert (await session.call_tool("notes_search", {"tag": "wor"})).value == {"notes": []}
    limited = await session.call_tool("notes_search", {"limit": 1})
    assert [n["id"] for n in limited.value["notes"]] == [1]

    assert (await session.call_tool("notes_delete", {"id": 1})).value == {"deleted": 1}
    assert failed(await session.call_tool("notes_delete", {"id": 1}), "not-found")
    remaining = await session.call_tool("notes_search", {})
    assert [n["id"] for n in remaining.value["notes"]] == [2]


# --- units -------------------------------------------------------------------------

INCH_M = 0.0254
FOOT_M = 12 * INCH_M
MILE_M = 5280 * FOOT_M
POUND_KG = 0.45359237
OUNCE_KG = POUND_KG / 16


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("value", "source", "target", "expected"),
    [
        (5, "mi", "km", 5 * MILE_M / 1000),
        (3, "ft", "in", 36),
        (250, "cm", "m", 2.5),
        (1, "lb", "oz", 16),
        (2, "kg", "lb", 2 / POUND_KG),
        (16, "oz", "g", 16 * OUNCE_KG * 1000),
        (90, "min", "h", 1.5),
        (2, "day", "s", 2 * 24 * 60 * 60),
        (100, "F", "C", (100 - 32) * 5 / 9),
        (-40, "C", "F", -40),
        (0, "K", "C", -273.15),
        (25, "C", "K", 298.15),
    ],
)
async def test_unit_conversions(session: Session, value: float, source: str, target: str, expected: float) -> None:
    result = await session.call_tool("convert_units", {"value": value, "from_unit": source, "to_unit": target})
    assert result.ok and result.value["unit"] == target
    assert result.value["value"] == pytest.approx(expected, rel=1e-9, abs=1e-9)


@pytest.mark.asyncio
async def test_incompatible_units_fail_with_a_code(session: Session) -> None:
    result = await session.call_tool("convert_units", {"value": 1, "from_unit": "kg", "to_unit": "m"})
    assert failed(result, "incompatible-units") and result.dispatched


# --- schema validation ---------------------------------------------------------------


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("tool", "args", "fragment"),
    [
        ("convert_units", {"value": 1, "from_unit": "furlong", "to_unit": "m"}, "from_unit"),
        ("convert_units", {"value": "1", "from_unit": "m", "to_unit": "km"}, "value"),
        ("notes_add", {"title": "no body"}, "'body' is a required property"),
        ("notes_add", {"title": "", "body": "x"}, "title"),
        ("notes_delete", {"id": 0}, "id"),
        ("read_file", {"path": "a", "mode": "rb"}, "mode"),
        ("list_files", {"max_entries": 0}, "max_entries"),
        ("search_files", {"query": ""}, "query"),
    ],
)
async def test_bad_arguments_are_refused_before_dispatch(
    session: Session, tool: str, args: dict[str, Any], fragment: str
) -> None:
    result = await session.call_tool(tool, args)
    assert failed(result, "invalid-arguments") and not result.dispatched
    assert result.error is not None and fragment in result.error.message
    assert not [e for e in session.log.of_type("tool-started")]


@pytest.mark.asyncio
async def test_write_file_leaves_host_plugin_and_git_state_alone(session: Session, reference_workspace: Path) -> None:
    # A program calling write_file must not change, from the host, what its sandbox binds read-only.
    for path in (
        ".git/hooks/pre-commit",
        ".git",
        "sub/.git/config",
        "sub/.git",
        ".ptc-plus/config.toml",
        ".agent-host/sessions/forged.jsonl",
        ".demo/notes.sqlite",
        "./.demo/x",
    ):
        result = await session.call_tool("write_file", {"path": path, "content": "planted"})
        assert failed(result, "protected-path"), (path, result)
    assert sorted(p.name for p in reference_workspace.iterdir()) == [".agent-host"]
    assert not list((reference_workspace / ".agent-host").rglob("forged.jsonl"))
    assert (await session.call_tool("write_file", {"path": "sub/git.txt", "content": "fine"})).ok
