"""Reading tool definitions from a JSON file (the ``ptc-plus sdk --tools FILE.json`` input).

Accepted shapes: a list of ``{name, description, input_schema, output_schema?,
source?}`` (MCP's ``inputSchema``/``outputSchema`` spellings too), or an MCP
dump ``{"server": NAME, "tools": [...]}`` whose tools get source ``mcp:NAME``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson

from hookspecs.types import ToolSpec
from ptc_plus.sdk.errors import InvalidToolsFile


def _spec(raw: Any, index: int, default_source: str, path: Path) -> ToolSpec:
    def bad(detail: str) -> InvalidToolsFile:
        return InvalidToolsFile(path=str(path), detail=f"tool #{index + 1}: {detail}")

    if not isinstance(raw, Mapping):
        raise bad("expected an object")
    name = raw.get("name")
    if not isinstance(name, str) or not name:
        raise bad("'name' must be non-empty text")
    description = raw.get("description") or ""
    if not isinstance(description, str):
        raise bad("'description' must be text")
    input_schema = raw.get("input_schema", raw.get("inputSchema", {"type": "object"}))
    output_schema = raw.get("output_schema", raw.get("outputSchema"))
    if not isinstance(input_schema, Mapping):
        raise bad("'input_schema' must be a JSON object")
    if output_schema is not None and not isinstance(output_schema, Mapping):
        raise bad("'output_schema' must be a JSON object")
    source = raw.get("source", default_source)
    if not isinstance(source, str) or not source:
        raise bad("'source' must be non-empty text")
    return ToolSpec(
        name=name, description=description, input_schema=input_schema, output_schema=output_schema, source=source
    )


def parse_tool_specs(data: Any, path: Path, default_source: str = "host") -> list[ToolSpec]:
    """Tool specs from already-parsed JSON ``data`` (``path`` is only used in errors)."""
    if isinstance(data, Mapping) and isinstance(data.get("tools"), list):
        server = data.get("server")
        if isinstance(server, str) and server:
            default_source = f"mcp:{server}"
        data = data["tools"]
    if not isinstance(data, list):
        raise InvalidToolsFile(path=str(path), detail="expected a JSON list of tool definitions")
    return [_spec(raw, i, default_source, path) for i, raw in enumerate(data)]


def load_tool_specs(path: Path, default_source: str = "host") -> list[ToolSpec]:
    """Read and check a tools file; raises :class:`InvalidToolsFile` saying what is wrong."""
    try:
        data = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError) as exc:
        raise InvalidToolsFile(path=str(path), detail=str(exc)) from exc
    return parse_tool_specs(data, path, default_source)
