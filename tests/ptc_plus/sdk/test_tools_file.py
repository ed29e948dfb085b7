"""One reading of ``--tools`` for every command: tools files in every accepted shape, ``demo`` and
``module:factory`` (ADR 0064)."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import orjson
import pytest

from hookspecs import ToolContext, ToolFailure, ToolSpec
from ptc_plus.sdk import (
    DEMO_TOOL_SET,
    InvalidToolsFile,
    ToolSetKind,
    ToolSetUnavailable,
    load_tool_set,
    load_tool_specs,
)

SCHEMA = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}
OUTPUT = {"type": "object", "properties": {"hits": {"type": "integer"}}}

MCP_TOOL = {"name": "search", "description": "Search things.", "inputSchema": SCHEMA, "outputSchema": OUTPUT}
OPENAI_TOOL = {
    "type": "function",
    "function": {"name": "search", "description": "Search things.", "parameters": SCHEMA},
}
RESPONSES_TOOL = {"type": "function", "name": "search", "description": "Search things.", "parameters": SCHEMA}

SHAPES: dict[str, Any] = {
    "mcp-tools-list-result": {"tools": [MCP_TOOL], "nextCursor": None},
    "mcp-json-rpc-response": {"jsonrpc": "2.0", "id": 1, "result": {"tools": [MCP_TOOL]}},
    "bare-list": [MCP_TOOL],
    "snake-case-list": [{"name": "search", "description": "Search things.", "input_schema": SCHEMA}],
    "openai-list": [OPENAI_TOOL],
    "openai-under-tools": {"tools": [OPENAI_TOOL]},
    "openai-responses-form": [RESPONSES_TOOL],
}


def _write(tmp_path: Path, data: Any, name: str = "tools.json") -> Path:
    path = tmp_path / name
    path.write_bytes(orjson.dumps(data))
    return path


@pytest.mark.parametrize("shape", SHAPES, ids=list(SHAPES))
def test_every_shape_gives_the_same_contract(shape: str, tmp_path: Path) -> None:
    [spec] = load_tool_specs(_write(tmp_path, SHAPES[shape]))
    assert (spec.name, spec.description, spec.input_schema, spec.source) == ("search", "Search things.", SCHEMA, "host")
    if shape.startswith("mcp"):
        assert spec.output_schema == OUTPUT


def test_a_server_name_makes_the_source_mcp(tmp_path: Path) -> None:
    [spec] = load_tool_specs(_write(tmp_path, {"server": "github", "tools": [MCP_TOOL]}))
    assert spec.source == "mcp:github" and spec.identity == "mcp:github/search"


def test_a_tool_without_a_schema_takes_any_object(tmp_path: Path) -> None:
    [spec] = load_tool_specs(_write(tmp_path, [{"type": "function", "function": {"name": "ping"}}]))
    assert spec.input_schema == {"type": "object"} and spec.description == ""


@pytest.mark.parametrize(
    ("data", "says"),
    [
        ({"nothing": []}, "expected a list of tools"),
        ([{"description": "no name"}], "tool #1: 'name'"),
        ([{"type": "web_search"}], "tool #1: type 'web_search' is not a function tool"),
        ([{"type": "function", "function": "search"}], "'function' must be an object"),
        ([{"type": "function", "function": {"name": "a", "parameters": []}}], "'parameters' must be a JSON object"),
        ([{"name": "a", "inputSchema": "x"}], "'inputSchema' must be a JSON object"),
        ([MCP_TOOL, OPENAI_TOOL], "tool #2: the name 'search' is also tool #1's"),
    ],
)
def test_wrong_shapes_say_what_is_wrong(data: Any, says: str, tmp_path: Path) -> None:
    with pytest.raises(InvalidToolsFile) as info:
        load_tool_specs(_write(tmp_path, data))
    assert info.value.code == "PTC-3001" and says in info.value.message("en")
    assert info.value.message("zh") != info.value.message("en")


# -- load_tool_set: what every command reads ---------------------------------------------------


@pytest.fixture
def factory_dir(tmp_path: Path) -> Iterator[Path]:
    """A directory holding a tools module, as a user's project would; the module is forgotten afterwards."""
    directory = tmp_path / "project"
    directory.mkdir()
    (directory / "ptc_test_user_tools.py").write_text(
        "from hookspecs import tool\n"
        "\n"
        "def make_tools(workspace):\n"
        "    @tool('where', description='Say where the workspace is.')\n"
        "    async def where(arguments, context):\n"
        "        return str(workspace)\n"
        "    return [where]\n"
        "\n"
        "def not_tools(workspace):\n"
        "    return ['where']\n"
        "\n"
        "def broken(workspace):\n"
        "    raise RuntimeError('no database')\n"
    )
    yield directory
    sys.modules.pop("ptc_test_user_tools", None)


def test_demo_is_the_reference_hosts_demo_tools(tmp_path: Path) -> None:
    tool_set = load_tool_set(DEMO_TOOL_SET, tmp_path)
    assert tool_set.kind is ToolSetKind.DEMO and tool_set.implemented
    assert "read_file" in [spec.name for spec in tool_set.specs]


def test_a_factory_is_imported_from_the_current_directory(factory_dir: Path, tmp_path: Path) -> None:
    assert str(factory_dir) not in sys.path
    tool_set = load_tool_set("ptc_test_user_tools:make_tools", tmp_path, cwd=factory_dir)
    assert tool_set.kind is ToolSetKind.FACTORY and tool_set.implemented
    assert [spec.name for spec in tool_set.specs] == ["where"]
    assert str(factory_dir) not in sys.path  # only while importing and calling the factory


@pytest.mark.parametrize(
    ("value", "code", "says"),
    [
        ("ptc_test_user_tools:nowhere", "PTC-3002", "AttributeError"),
        ("ptc_test_user_tools:broken", "PTC-3002", "RuntimeError: no database"),
        ("ptc_test_user_tools:not_tools", "PTC-3006", "must return ToolDefinition objects, got str"),
        ("ptc_test_no_such_module:make_tools", "PTC-3005", "no module named ptc_test_no_such_module"),
        ("not a tool set", "PTC-3004", "give demo, a JSON tools file (FILE.json) or module:factory"),
    ],
)
def test_a_tool_set_that_cannot_be_loaded_says_why(
    value: str, code: str, says: str, factory_dir: Path, tmp_path: Path
) -> None:
    with pytest.raises(ToolSetUnavailable) as info:
        load_tool_set(value, tmp_path, cwd=factory_dir)
    assert info.value.code == code and says in info.value.message("en")
    assert value in info.value.message("zh")


def test_a_tools_file_gives_contracts_whose_calls_fail_with_a_typed_error(tmp_path: Path) -> None:
    _write(tmp_path, SHAPES["openai-list"])
    tool_set = load_tool_set("tools.json", tmp_path, cwd=tmp_path)
    assert tool_set.kind is ToolSetKind.FILE and not tool_set.implemented
    assert tool_set.specs == (ToolSpec(name="search", description="Search things.", input_schema=SCHEMA),)
    with pytest.raises(ToolFailure) as info:
        asyncio.run(tool_set.definitions[0].handler({"q": "x"}, cast(ToolContext, None)))  # the body reads no context
    assert info.value.code == "PTC-3003"
    assert "search" in info.value.message and "tools.json" in info.value.message


@pytest.mark.parametrize("value", ["missing.json", "sub/dir/tools", "./demo"])
def test_a_path_is_read_as_a_tools_file(value: str, tmp_path: Path) -> None:
    with pytest.raises(InvalidToolsFile) as info:
        load_tool_set(value, tmp_path, cwd=tmp_path)
    assert info.value.code == "PTC-3001"


def test_an_existing_file_is_a_tools_file_whatever_its_name(tmp_path: Path) -> None:
    _write(tmp_path, [MCP_TOOL], name="mod:attr")
    assert load_tool_set("mod:attr", tmp_path, cwd=tmp_path).kind is ToolSetKind.FILE
