"""An MCP server's tools as host tool definitions (``mcp:<server>/<tool>``).

The contract is the server's: its name, input and output schemas, and its
description followed by the server's ``instructions`` (they belong to every
contract of that server: ADR 0072). The value of a call is the result's
``structured_content`` when there is one, else its text; ``is_error`` is a
:class:`~hookspecs.ToolFailure` (PTC-7005), which a program sees as a
``ToolCallError`` naming the tool.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import orjson

from hookspecs import Concurrency, JSONObject, JSONValue, ToolContext, ToolDefinition, ToolFailure, ToolSpec
from ptc_plus.adapters.mcp.errors import RequestFailed, ToolReportedError
from ptc_plus.adapters.mcp.hub import HUB, Server
from ptc_plus.adapters.mcp.snapshots import SnapshotTool
from ptc_plus.capabilities import KINDS, CapabilityKind
from ptc_plus.errors import PtcError

if TYPE_CHECKING:  # the SDK is imported when a tool is called (ADR 0105)
    import mcp.types as mt
    from mcp import ClientSession

MCP_SOURCE = KINDS[CapabilityKind.MCP_TOOL].source


def source_of(server: str) -> str:
    """The tool source of ``server``'s tools: their identity is ``mcp:<server>/<tool>``."""
    return f"{MCP_SOURCE}:{server}"


def described(description: str, server: str, instructions: str) -> str:
    """A member's description with its server's instructions as the closing paragraph."""
    text = description.strip()
    if instructions.strip():
        note = f"(MCP server {server}: {instructions.strip()})"
        text = f"{text}\n\n{note}" if text else note
    return text


def tool_spec(server: str, tool: mt.Tool | SnapshotTool, instructions: str) -> ToolSpec:
    return ToolSpec(
        name=tool.name,
        description=described(tool.description or tool.title or "", server, instructions),
        input_schema=_plain(tool.input_schema) or {"type": "object"},
        output_schema=_plain(tool.output_schema),
        concurrency=Concurrency.PARALLEL,
        source=source_of(server),
    )


def tool_definition(server: Server, spec: ToolSpec) -> ToolDefinition:
    """``spec``'s definition; its body calls the tool through the hub on ``server``'s live connection."""
    name = spec.name
    label = spec.identity

    async def handler(arguments: JSONObject, context: ToolContext) -> JSONValue:
        async def call(session: ClientSession) -> mt.CallToolResult:
            return await session.call_tool(name, dict(arguments))

        try:
            result = await HUB.call(server.request(label, call))
        except PtcError as error:
            raise ToolFailure(error.code, error.message()) from None
        except Exception as error:  # the SDK refused the answer (for example against the output schema)
            failed = RequestFailed(server=server.key.name, tool=label, detail=f"{type(error).__name__}: {error}")
            raise ToolFailure(failed.code, failed.message()) from None
        if result.is_error:
            reported = ToolReportedError(tool=label, text=content_text(result.content) or "-")
            raise ToolFailure(reported.code, reported.message(), {"content": content_value(result.content)})
        if result.structured_content is not None:
            return _plain(result.structured_content)
        return content_value(result.content)

    return ToolDefinition(spec=spec, handler=handler)


def content_text(content: list[Any]) -> str:
    import mcp.types as mt

    return "\n".join(item.text for item in content if isinstance(item, mt.TextContent))


def content_value(content: list[Any]) -> JSONValue:
    """Text-only content as one string; anything else as its JSON items (images stay base64)."""
    import mcp.types as mt

    if all(isinstance(item, mt.TextContent) for item in content):
        return content_text(content)
    items: list[JSONValue] = [_plain(item.model_dump(mode="json", exclude_none=True)) for item in content]
    return items


def _plain(value: Any) -> Any:
    """``value`` as plain JSON (the SDK hands out dicts that may hold non-JSON leaves)."""
    if value is None:
        return None
    return orjson.loads(orjson.dumps(value, default=str))
