"""Rendering rules, one behaviour per test."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest

from hookspecs.types import ToolSpec
from ptc_plus.sdk import render_sdk, render_tool, to_identifier, unique_identifiers
from ptc_plus.sdk.errors import InvalidToolsFile
from ptc_plus.sdk.tools_file import load_tool_specs


def tool(input_schema: dict[str, Any], output_schema: dict[str, Any] | None = None, name: str = "t") -> ToolSpec:
    return ToolSpec(name=name, description="Does t.", input_schema=input_schema, output_schema=output_schema)


def text_of(spec: ToolSpec) -> str:
    text = render_sdk([spec]).text
    ast.parse(text)
    return text


def test_required_and_optional_parameters_are_keyword_only() -> None:
    text = text_of(
        tool({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}}, "required": ["a"]})
    )
    assert "async def t(*, a: int, b: str = ...) -> Any:" in text


def test_enum_const_and_nullable_render_as_literals() -> None:
    schema = {
        "type": "object",
        "properties": {
            "mode": {"enum": ["fast", "slow", None]},
            "kind": {"const": 3},
            "ratio": {"enum": [0.5, 1.5]},
            "note": {"type": ["string", "null"]},
        },
    }
    text = text_of(tool(schema))
    assert "mode: Literal['fast', 'slow'] | None = ..." in text
    assert "kind: Literal[3] = ..." in text
    assert "ratio: float = ..." in text  # floats cannot be Literal members
    assert "note: str | None = ..." in text


def test_any_of_and_one_of_become_unions_and_arrays_lists() -> None:
    schema = {
        "type": "object",
        "properties": {
            "v": {"anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "string"}]},
            "w": {"oneOf": [{"type": "array", "items": {"type": "number"}}, {"type": "null"}]},
            "pair": {"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}], "items": False},
        },
        "required": ["v", "w", "pair"],
    }
    text = text_of(tool(schema))
    assert "pair: tuple[str, int], v: str | int, w: list[float] | None" in text


def test_nested_objects_become_named_typed_dicts_with_not_required() -> None:
    schema = {
        "type": "object",
        "properties": {
            "filter": {
                "type": "object",
                "description": "How to filter.",
                "properties": {
                    "tag": {"type": "string", "description": "Tag to keep.", "default": "x"},
                    "n": {"type": "integer"},
                },
                "required": ["n"],
            }
        },
        "required": ["filter"],
    }
    text = text_of(tool(schema, name="list_notes"))
    assert "class ListNotesFilter(TypedDict):" in text
    assert '    """How to filter."""' in text
    assert "    n: int\n    tag: NotRequired[str]\n" in text
    assert '"""Tag to keep. (default: \\"x\\")"""' in text or '"""Tag to keep. (default: "x")"""' in text
    assert "async def list_notes(*, filter: ListNotesFilter) -> Any:" in text


def test_refs_and_recursive_refs_render_without_infinite_expansion() -> None:
    schema = {
        "type": "object",
        "$defs": {
            "Node": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}},
                },
                "required": ["name"],
            },
            "Loop": {"$ref": "#/$defs/Loop2"},
            "Loop2": {"$ref": "#/$defs/Loop"},
        },
        "properties": {
            "root": {"$ref": "#/$defs/Node"},
            "odd": {"$ref": "#/$defs/Loop"},
            "far": {"$ref": "http://x/y"},
        },
        "required": ["root"],
    }
    text = text_of(tool(schema))
    assert "class Node(TypedDict):" in text
    assert "children: NotRequired[list[Node]]" in text
    assert "root: Node" in text and "odd: Any = ..." in text and "far: Any = ..." in text


def test_root_self_reference_in_output() -> None:
    out = {"type": "object", "properties": {"next": {"$ref": "#"}, "v": {"type": "integer"}}}
    text = text_of(tool({"type": "object"}, out, name="walk"))
    assert "-> WalkResult:" in text and "next: NotRequired[WalkResult]" in text


def test_non_identifier_names_are_mapped_and_shown() -> None:
    schema = {
        "type": "object",
        "properties": {"odd-name": {"type": "string"}, "class": {"type": "string"}, "odd_name": {"type": "integer"}},
        "required": ["odd-name", "class", "odd_name"],
    }
    spec = tool(schema, name="my-tool")
    rendered = render_tool(spec)
    mapping = {p.name: p.identifier for p in rendered.parameters}
    assert mapping == {"class": "class_", "odd-name": "odd_name_2", "odd_name": "odd_name"}
    assert rendered.argument_names == {"class_": "class", "odd_name_2": "odd-name", "odd_name": "odd_name"}
    text = text_of(spec)
    assert "async def my_tool(*, class_: str, odd_name_2: str, odd_name: int) -> Any:" in text
    assert "odd_name_2 (JSON name 'odd-name')" in text
    assert "Real tool name: 'my-tool' (call it as tools['my-tool'])." in text


def test_object_keys_that_are_not_identifiers_use_the_functional_form() -> None:
    out = {
        "type": "object",
        "properties": {"content-type": {"type": "string"}, "self": {"$ref": "#"}},
        "required": ["content-type"],
    }
    text = text_of(tool({"type": "object"}, out, name="head"))
    assert "HeadResult = TypedDict(" in text
    assert "'content-type': str," in text and "'self': 'NotRequired[HeadResult]'," in text
    exec(compile(text, "<sdk>", "exec"), {})


def test_hostile_descriptions_stay_inside_their_docstrings() -> None:
    spec = ToolSpec(
        name="t",
        description='ends with a quote" and \\ and """ and \x00 and \r\n next',
        input_schema={"type": "object"},
    )
    module = ast.parse(render_sdk([spec]).text)
    stub = next(n for n in module.body if isinstance(n, ast.AsyncFunctionDef))
    assert ast.get_docstring(stub) == 'ends with a quote" and \\ and """ and \x00 and\nnext'


def test_all_of_merges_object_parts() -> None:
    schema = {
        "type": "object",
        "properties": {
            "x": {
                "allOf": [
                    {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
                    {"type": "object", "properties": {"b": {"type": "integer"}}},
                ]
            }
        },
    }
    text = text_of(tool(schema))
    assert "    a: str\n    b: NotRequired[int]" in text


def test_clashing_type_names_across_tools_are_qualified() -> None:
    def item(field: str) -> dict[str, Any]:
        return {
            "type": "object",
            "$defs": {"Item": {"type": "object", "properties": {field: {"type": "string"}}}},
            "properties": {"item": {"$ref": "#/$defs/Item"}},
        }

    a = ToolSpec(name="a", description="", input_schema=item("x"), source="mcp:one")
    b = ToolSpec(name="b", description="", input_schema=item("y"), source="mcp:two")
    same = ToolSpec(name="c", description="", input_schema=item("x"), source="mcp:one")
    text = render_sdk([a, b, same]).text
    ast.parse(text)
    assert "class McpOneItem(TypedDict):" in text and "class McpTwoItem(TypedDict):" in text
    assert "class Item(TypedDict)" not in text
    assert "# ── mcp:one ──" in text and "# ── mcp:two ──" in text
    shared = render_sdk([a, same]).text
    assert shared.count("class Item(TypedDict):") == 1


@pytest.mark.parametrize(
    ("name", "expected"), [("ok", "ok"), ("a-b", "a_b"), ("1x", "_1x"), ("def", "def_"), ("ﬁle", "file"), ("", "_")]
)
def test_to_identifier(name: str, expected: str) -> None:
    assert to_identifier(name) == expected


def test_unique_identifiers_prefers_names_that_already_are_identifiers() -> None:
    assert unique_identifiers(["a-b", "a_b", "a b"]) == {"a_b": "a_b", "a b": "a_b_2", "a-b": "a_b_3"}


def test_tools_file_accepts_both_spellings_and_reports_errors(tmp_path: Path) -> None:
    path = tmp_path / "tools.json"
    path.write_text(
        '[{"name": "a", "description": "A", "inputSchema": {"type": "object"}, "outputSchema": {"type": "string"}},'
        ' {"name": "b", "input_schema": {"type": "object"}}]'
    )
    specs = load_tool_specs(path)
    assert [s.name for s in specs] == ["a", "b"] and specs[0].output_schema == {"type": "string"}
    path.write_text('[{"description": "no name"}]')
    with pytest.raises(InvalidToolsFile) as info:
        load_tool_specs(path)
    assert info.value.code == "PTC-3001" and "tool #1" in info.value.message("en")
