"""MCP resources: one source per server, and the two plugin tools programs read them through.

A server that declares the ``resources`` capability is one capability,
``mcp-resources:<server>``, built from that declaration alone: nothing is
listed remotely to assemble a prompt. Programs reach the resources with
``await resources.list(server)`` and ``await resources.read(uri)`` (the
worker's ``resources`` object), nested calls of :data:`LIST_TOOL` and
:data:`READ_TOOL`, so the guard and the lanes apply; the guard refuses a
server the plan keeps out, and a read without ``server`` only ever looks at
servers the plan lets in (``allowed``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping
from typing import TYPE_CHECKING

from hookspecs import AgentRef, Concurrency, JSONObject, JSONValue, ToolContext, ToolDefinition, ToolFailure, ToolSpec
from ptc_plus.adapters.mcp.errors import NoResourceServer
from ptc_plus.adapters.mcp.hub import HUB, Server
from ptc_plus.errors import PtcError

if TYPE_CHECKING:  # the SDK is imported when a resource is read or listed (ADR 0105)
    import mcp.types as mt
    from mcp import ClientSession

READ_TOOL = "read_mcp_resource"
LIST_TOOL = "list_mcp_resources"
TOOLS = frozenset({READ_TOOL, LIST_TOOL})
SOURCE = "plugin:ptc_plus"
MAX_LISTED = 1000
"""Resources (and templates) one list returns at most: a list is a program's question, not a dump."""

Allowed = Callable[[AgentRef], Collection[str]]
"""The resource servers the caller's plan lets in (names)."""
Servers = Callable[[AgentRef], Mapping[str, Server]]
"""The caller's session's servers that declare resources, by name."""


def resource_tools(servers: Servers, allowed: Allowed) -> tuple[ToolDefinition, ToolDefinition]:
    """``read_mcp_resource(uri, server=None)`` and ``list_mcp_resources(server)``."""
    server_property: JSONObject = {"type": "string", "description": "the MCP server's name"}
    read_spec = ToolSpec(
        name=READ_TOOL,
        description="Read one MCP resource by URI: {uri, contents: [{uri, mime_type, text | blob}], text}.",
        input_schema={
            "type": "object",
            "properties": {"uri": {"type": "string"}, "server": server_property},
            "required": ["uri"],
            "additionalProperties": False,
        },
        concurrency=Concurrency.PARALLEL,
        source=SOURCE,
    )
    list_spec = ToolSpec(
        name=LIST_TOOL,
        description="List one MCP server's resources and resource templates.",
        input_schema={
            "type": "object",
            "properties": {"server": server_property},
            "required": ["server"],
            "additionalProperties": False,
        },
        concurrency=Concurrency.PARALLEL,
        source=SOURCE,
    )

    def pick(context: ToolContext, name: object) -> tuple[str, Server]:
        agent = context.call.caller
        mine = {n: s for n, s in servers(agent).items() if n in set(allowed(agent))}
        if isinstance(name, str) and name in mine:
            return name, mine[name]
        raise NoResourceServer(server=str(name), known=", ".join(sorted(mine)) or "-")

    async def read(arguments: JSONObject, context: ToolContext) -> JSONValue:
        uri = str(arguments["uri"])
        try:
            if arguments.get("server") is not None:
                name, server = pick(context, arguments["server"])
            else:
                name, server = await _owner(uri, context, servers, allowed)

            async def send(session: ClientSession) -> mt.ReadResourceResult:
                return await session.read_resource(uri)

            result = await HUB.call(server.request(f"mcp-resources:{name} {uri}", send))
        except PtcError as error:
            raise ToolFailure(error.code, error.message()) from None
        contents = [_content(c) for c in result.contents]
        text = "\n".join(c["text"] for c in contents if isinstance(c.get("text"), str))
        return {"uri": uri, "server": name, "contents": contents, "text": text}

    async def listing(arguments: JSONObject, context: ToolContext) -> JSONValue:
        try:
            name, server = pick(context, arguments.get("server"))
            found = await HUB.call(_listed(server, name))
        except PtcError as error:
            raise ToolFailure(error.code, error.message()) from None
        return {"server": name, **found}

    return ToolDefinition(spec=read_spec, handler=read), ToolDefinition(spec=list_spec, handler=listing)


def _content(item: mt.TextResourceContents | mt.BlobResourceContents) -> dict[str, JSONValue]:
    import mcp.types as mt

    out: dict[str, JSONValue] = {"uri": str(item.uri), "mime_type": item.mime_type}
    if isinstance(item, mt.TextResourceContents):
        out["text"] = item.text
    else:
        out["blob"] = item.blob
    return out


async def _listed(server: Server, name: str) -> dict[str, JSONValue]:
    """Every resource and template of ``server`` (at most :data:`MAX_LISTED` of each)."""
    import mcp.types as mt

    async def resources(session: ClientSession) -> list[mt.Resource]:
        found: list[mt.Resource] = []
        cursor: str | None = None
        while len(found) < MAX_LISTED:
            page = await session.list_resources(params=mt.PaginatedRequestParams(cursor=cursor) if cursor else None)
            found.extend(page.resources)
            if not (cursor := page.next_cursor):
                break
        return found[:MAX_LISTED]

    async def templates(session: ClientSession) -> list[mt.ResourceTemplate]:
        found: list[mt.ResourceTemplate] = []
        cursor: str | None = None
        while len(found) < MAX_LISTED:
            page = await session.list_resource_templates(
                params=mt.PaginatedRequestParams(cursor=cursor) if cursor else None
            )
            found.extend(page.resource_templates)
            if not (cursor := page.next_cursor):
                break
        return found[:MAX_LISTED]

    listed = await server.request(f"mcp-resources:{name}", resources)
    shaped = await server.request(f"mcp-resources:{name}", templates)
    return {
        "resources": [
            {"uri": str(r.uri), "name": r.name, "description": r.description or "", "mime_type": r.mime_type}
            for r in listed
        ],
        "templates": [
            {"uri_template": t.uri_template, "name": t.name, "description": t.description or ""} for t in shaped
        ],
    }


async def _owner(uri: str, context: ToolContext, servers: Servers, allowed: Allowed) -> tuple[str, Server]:
    """The one allowed server that offers ``uri`` (a listed resource or a matching template)."""
    agent = context.call.caller
    mine = {n: s for n, s in servers(agent).items() if n in set(allowed(agent))}
    if len(mine) == 1:
        return next(iter(mine.items()))
    matches: list[str] = []
    for name, server in sorted(mine.items()):
        try:
            found = await HUB.call(_listed(server, name))
        except PtcError:
            continue
        if any(r["uri"] == uri for r in found["resources"]) or any(
            _matches(t["uri_template"], uri) for t in found["templates"]
        ):
            matches.append(name)
    if len(matches) != 1:
        raise NoResourceServer(server=uri, known=", ".join(matches or sorted(mine)) or "-")
    return matches[0], mine[matches[0]]


def _matches(template: str, uri: str) -> bool:
    """Whether ``uri`` fits ``template`` (simple ``{name}`` expressions: one or more characters each)."""
    parts = re.split(r"\{[^}]*\}", template)
    pattern = ".+?".join(re.escape(p) for p in parts)
    return re.fullmatch(pattern, uri) is not None
