"""``ptc-plus mcp-serve``: PTC Plus served to any MCP client over stdio (ADR 0073).

One process serves one client connection: the embedded reference host, with
the plugins installed (PTC Plus among them), opens one session for it before the
handshake, so the plan is frozen and the catalog is known when the server
answers ``initialize`` with it as its ``instructions``. The wire is mapped here
onto :class:`~.serve_session.ServedSession`:

- ``tools/list``: the session's native tool list (``run_code`` carrying the
  bootstrap, ``read_spill``), then ``search_capabilities``;
- ``tools/call``: one model step, dispatched through the host (validation, the
  guard, the plan, the ordered scheduler); what the plugin owes the model at
  the next step comes back as further text blocks of the result;
- prompts ``capabilities`` and ``capabilities_refresh``: the receipts of
  ``/capabilities`` and ``/capabilities refresh`` (clients show prompts as
  slash commands); a refresh that applied adds the notice the model must read,
  and is followed by ``notifications/tools/list_changed``; so is a call at whose
  end a refresh that waited for a running cell applied, or after which the tool
  list changed.

On handshake-era connections the notification goes on the connection; on
2026-07-28 connections it is published to ``subscriptions/listen`` streams,
the only place that protocol delivers it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import mcp_types as types
from mcp import MCPError
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.stdio import stdio_server
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ToolsListChanged
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from hookspecs import ToolDefinition
from hookspecs.serialization import canonical_bytes
from ptc_plus import __version__
from ptc_plus.doors import SeatTool
from ptc_plus.doors.mcp.serve_session import ServedSession
from ptc_plus.doors.mcp.serve_session import served as served_session
from ptc_plus.i18n import message

SERVER_NAME = "ptc-plus"
PROMPT_SHOW = "capabilities"
PROMPT_REFRESH = "capabilities_refresh"

__all__ = ["PROMPT_REFRESH", "PROMPT_SHOW", "SERVER_NAME", "build_server", "serve_stdio"]


async def serve_stdio(
    workspace: Path,
    tools: Sequence[ToolDefinition],
    *,
    user_id: str,
    opened: Callable[[ServedSession], None] | None = None,
) -> None:
    """Serve one client on this process's stdin/stdout until it disconnects.

    ``opened`` is called with the session once it is open, before the client is answered (the
    command reports the session's source problems on stderr there).

    Session logs and spilled text live in a temporary directory removed at the
    end (a served session is never resumed); statistics go where every session's
    go (the workspace and user stores).

    :raises ServeNotOpened: the host could not open the session.
    """
    async with served_session(workspace, tools, user_id=user_id, scratch="ptc-mcp-serve-") as served:
        if opened is not None:
            opened(served)
        server = build_server(served)
        options = server.create_initialization_options(NotificationOptions(tools_changed=True))
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, options)


def build_server(served: ServedSession) -> Server[Any]:
    """The low-level MCP server answering for ``served`` (its ``instructions`` are the session's catalog)."""
    wire = _Wire(served)
    return Server(
        SERVER_NAME,
        version=__version__,
        instructions=served.instructions or None,
        on_list_tools=wire.list_tools,
        on_call_tool=wire.call_tool,
        on_list_prompts=wire.list_prompts,
        on_get_prompt=wire.get_prompt,
        on_subscriptions_listen=ListenHandler(wire.bus),
    )


class _Wire:
    """The handlers, and what they remember between requests: the tool list the client last saw."""

    def __init__(self, served: ServedSession) -> None:
        self.served = served
        self.bus = InMemorySubscriptionBus()
        self._listed = _fingerprint(served.tools())
        self._pending: set[asyncio.Task[None]] = set()

    async def list_tools(self, ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        tools = self.served.tools()
        self._listed = _fingerprint(tools)
        return types.ListToolsResult(tools=[_tool(t) for t in tools])

    async def call_tool(self, ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        sequence = self.served.plan_sequence()
        served = await self.served.call(params.name, params.arguments or {})
        content = [types.TextContent(type="text", text=text) for text in (served.text, *served.owed)]
        # A refresh that waited for this call's cell applied at its end: its notice is in ``owed``.
        self._changed(ctx, force=self.served.plan_sequence() != sequence)
        return types.CallToolResult(content=list(content), is_error=not served.ok)

    async def list_prompts(self, ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListPromptsResult:
        return types.ListPromptsResult(
            prompts=[
                types.Prompt(name=PROMPT_SHOW, description=message("ptc.mcp-serve.prompt.capabilities")),
                types.Prompt(name=PROMPT_REFRESH, description=message("ptc.mcp-serve.prompt.refresh")),
            ]
        )

    async def get_prompt(self, ctx: Any, params: types.GetPromptRequestParams) -> types.GetPromptResult:
        if params.name == PROMPT_SHOW:
            receipt = self.served.show()
            return _prompt(message("ptc.mcp-serve.prompt.capabilities"), receipt.status, receipt.data, [receipt.text])
        if params.name == PROMPT_REFRESH:
            refreshed = self.served.refresh()
            receipt = refreshed.receipt
            self._changed(ctx, force=refreshed.applied)
            texts = [receipt.text, *refreshed.notice]
            return _prompt(message("ptc.mcp-serve.prompt.refresh"), receipt.status, receipt.data, texts)
        raise MCPError(types.INVALID_PARAMS, message("ptc.mcp-serve.prompt.unknown", name=params.name))

    def _changed(self, ctx: Any, *, force: bool) -> None:
        """Tell the client to list the tools again when they changed (always after an applied refresh).

        Sent from a task of its own, so the answer to the request that caused it goes out first.
        """
        listed = _fingerprint(self.served.tools())
        if not force and listed == self._listed:
            return
        self._listed = listed
        task = asyncio.get_running_loop().create_task(self._notify(ctx))
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    async def _notify(self, ctx: Any) -> None:
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            await self.bus.publish(ToolsListChanged())
        else:
            await ctx.session.send_tool_list_changed()


def _tool(tool: SeatTool) -> types.Tool:
    return types.Tool(name=tool.name, description=tool.description, input_schema=dict(tool.input_schema))


def _fingerprint(tools: Sequence[SeatTool]) -> bytes:
    return canonical_bytes([[t.name, t.description, dict(t.input_schema)] for t in tools])


def _prompt(description: str, status: Any, data: Any, texts: Sequence[str]) -> types.GetPromptResult:
    """The receipt as user-role text messages; its status and data ride in ``_meta`` for clients that look."""
    messages = [
        types.PromptMessage(role="user", content=types.TextContent(type="text", text=text)) for text in texts if text
    ]
    meta = {"ptc-plus/receipt": {"status": str(status), "data": data}}
    return types.GetPromptResult(description=description, messages=messages, _meta=meta)
