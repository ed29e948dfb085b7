"""Reading tool definitions from a JSON tools file (what ``--tools FILE.json`` names).

Accepted shapes, all of them for every command (ADR 0064):

- an MCP ``tools/list`` result ``{"tools": [...], "nextCursor"?}`` (also inside a
  JSON-RPC response ``{"jsonrpc", "id", "result": {...}}``), optionally with
  ``"server": NAME``, which gives its tools the source ``mcp:NAME``;
- a bare list of tools;
- OpenAI function tools, ``{"type": "function", "function": {"name",
  "description", "parameters"}}`` (Chat Completions) or ``{"type": "function",
  "name", "description", "parameters"}`` (Responses), as a list or under ``"tools"``.

A tool object is ``{name, description?, input_schema?, output_schema?, source?}``
with MCP's ``inputSchema``/``outputSchema`` and OpenAI's ``parameters`` as other
spellings of the schemas. Shapes may be mixed in one list; names must be unique.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson

from hookspecs.types import ToolSpec
from ptc_plus.sdk.errors import InvalidToolsFile

_INPUT_KEYS = ("input_schema", "inputSchema", "parameters")
_OUTPUT_KEYS = ("output_schema", "outputSchema")


def _first(raw: Mapping[str, Any], keys: tuple[str, ...]) -> tuple[str, Any] | None:
    for key in keys:
        if key in raw:
            return key, raw[key]
    return None


def _function_tool(raw: Mapping[str, Any]) -> Mapping[str, Any] | str:
    """The tool object inside an OpenAI function tool, ``raw`` itself if it is not one, or why it is refused."""
    kind = raw.get("type")
    if kind is None:
        return raw
    if kind != "function":
        return f"type {kind!r} is not a function tool"
    function = raw.get("function")
    if function is None:
        return raw  # the Responses API's flat form
    if not isinstance(function, Mapping):
        return "'function' must be an object"
    return function


def _spec(raw: Any, index: int, default_source: str, path: Path) -> ToolSpec:
    def bad(detail: str) -> InvalidToolsFile:
        return InvalidToolsFile(path=str(path), detail=f"tool #{index + 1}: {detail}")

    if not isinstance(raw, Mapping):
        raise bad("expected an object")
    tool = _function_tool(raw)
    if isinstance(tool, str):
        raise bad(tool)
    name = tool.get("name")
    if not isinstance(name, str) or not name:
        raise bad("'name' must be non-empty text")
    description = tool.get("description") or ""
    if not isinstance(description, str):
        raise bad("'description' must be text")
    found = _first(tool, _INPUT_KEYS)
    input_key, input_schema = found if found is not None else ("input_schema", {"type": "object"})
    if not isinstance(input_schema, Mapping):
        raise bad(f"'{input_key}' must be a JSON object")
    found = _first(tool, _OUTPUT_KEYS)
    output_key, output_schema = found if found is not None else ("output_schema", None)
    if output_schema is not None and not isinstance(output_schema, Mapping):
        raise bad(f"'{output_key}' must be a JSON object")
    source = tool.get("source", default_source)
    if not isinstance(source, str) or not source:
        raise bad("'source' must be non-empty text")
    return ToolSpec(
        name=name, description=description, input_schema=input_schema, output_schema=output_schema, source=source
    )


def parse_tool_specs(data: Any, path: Path, default_source: str = "host") -> list[ToolSpec]:
    """Tool specs from already-parsed JSON ``data`` in any accepted shape (``path`` is only used in errors)."""
    if isinstance(data, Mapping) and "jsonrpc" in data and isinstance(data.get("result"), Mapping):
        data = data["result"]
    if isinstance(data, Mapping) and isinstance(data.get("tools"), list):
        server = data.get("server")
        if isinstance(server, str) and server:
            default_source = f"mcp:{server}"
        data = data["tools"]
    if not isinstance(data, list):
        detail = 'expected a list of tools, an MCP tools/list result {"tools": [...]} or OpenAI function tools'
        raise InvalidToolsFile(path=str(path), detail=detail)
    specs = [_spec(raw, i, default_source, path) for i, raw in enumerate(data)]
    seen: dict[str, int] = {}
    for index, spec in enumerate(specs):
        if spec.name in seen:
            detail = f"tool #{index + 1}: the name {spec.name!r} is also tool #{seen[spec.name] + 1}'s"
            raise InvalidToolsFile(path=str(path), detail=detail)
        seen[spec.name] = index
    return specs


def load_tool_specs(path: Path, default_source: str = "host") -> list[ToolSpec]:
    """Read and check a tools file; raises :class:`InvalidToolsFile` saying what is wrong."""
    try:
        data = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError) as exc:
        raise InvalidToolsFile(path=str(path), detail=str(exc)) from exc
    return parse_tool_specs(data, path, default_source)
