"""Dump the tool schemas of real MCP servers into ``tests/data/mcp/`` (dev tool).

Usage::

    python scripts/dump_mcp_schemas.py [--out DIR] NAME=COMMAND [ARG ...] ...

Each server spec is one argument; the command and its arguments are split on
spaces, for example ``time=mcp-server-time`` or
``git="mcp-server-git --repository /tmp/repo"``. Every server is started over
stdio with the official ``mcp`` client, asked for ``tools/list`` (and, when it
offers them, resources and resource templates), and written as
``<NAME>.json``: ``{"version": 1, "server": NAME, "tools": [...], ...}`` with
the MCP spellings ``inputSchema``/``outputSchema`` kept as served.

The ``mcp`` package is needed only to run this script; PTC Plus itself does
not import it.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path
from typing import Any

import anyio
import orjson

DEFAULT_OUT = Path(__file__).resolve().parent.parent / "tests" / "data" / "mcp"


def _tool_record(tool: Any) -> dict[str, Any]:
    record: dict[str, Any] = {"name": tool.name, "description": tool.description or ""}
    record["inputSchema"] = tool.input_schema
    if tool.output_schema is not None:
        record["outputSchema"] = tool.output_schema
    return record


async def _dump_one(name: str, argv: list[str]) -> dict[str, Any]:
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(command=argv[0], args=argv[1:])
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        init = await session.initialize()
        tools = (await session.list_tools()).tools
        dump: dict[str, Any] = {
            "version": 1,
            "server": name,
            "server_info": {"name": init.server_info.name, "version": init.server_info.version},
            "tools": [_tool_record(t) for t in sorted(tools, key=lambda t: t.name)],
        }
        if init.capabilities.resources is not None:
            dump["resources"] = await _optional(session.list_resources(), "resources", _resource_record)
            dump["resource_templates"] = await _optional(
                session.list_resource_templates(), "resource_templates", _template_record
            )
        return dump


def _resource_record(resource: Any) -> dict[str, Any]:
    return {"uri": str(resource.uri), "name": resource.name, "description": resource.description}


def _template_record(template: Any) -> dict[str, Any]:
    return {"uriTemplate": template.uri_template, "name": template.name, "description": template.description}


async def _optional(request: Any, field: str, record: Any) -> list[dict[str, Any]]:
    """Some servers announce resources yet answer one of the list methods with "method not found"."""
    from mcp.shared.exceptions import MCPError

    try:
        result = await request
    except MCPError:
        return []
    return [record(item) for item in getattr(result, field)]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("servers", nargs="+", metavar="NAME=COMMAND")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    failed = 0
    for spec in args.servers:
        name, _, command = spec.partition("=")
        try:
            dump = anyio.run(_dump_one, name, shlex.split(command))
        except Exception as exc:  # a dev tool: report and go on with the next server
            print(f"{name}: failed: {exc!r}", file=sys.stderr)
            failed += 1
            continue
        path = args.out / f"{name}.json"
        path.write_bytes(orjson.dumps(dump, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n")
        print(f"{name}: {len(dump['tools'])} tools -> {path}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
