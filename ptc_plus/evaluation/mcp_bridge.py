"""The MCP task's server as host tools: a host that speaks MCP natively, the same in every style.

The evaluation's host offers a real MCP server's tools (``mcp-server-time`` by
default) as its own tools, named as the server names them, with the source
``mcp:<server>``: native styles call them as function tools, code styles reach
them through programs, and PTC Plus manages them like any host tool. The SDK's
``ClientSession`` must be entered and left in one task, so one task owns the
connection (:meth:`McpBridge._serve`) for the bridge's whole life; tool bodies,
running in the host's tasks, send their requests over that live session.
Leaving the bridge stops the serving task, which closes the session and the
server's stdio (the SDK then ends the process).

``structured=False`` is a host whose MCP client reads a result's text content
only, as clients of the protocol before structured output (2025-06-18) do: it
offers no tool's ``outputSchema`` and never reads ``structuredContent``, so
the time server's tools are tools without an output schema whose results are
JSON text (ADR 0109: the evaluation learns their shapes like any other's).
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

import mcp.types as mt
import orjson
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from hookspecs import JSONObject, JSONValue, ToolContext, ToolDefinition, ToolFailure, ToolSpec
from ptc_plus.evaluation.errors import McpServerFailed, McpToolFailed

TIME_SERVER = "time"
"""The server name of the time server (tool source ``mcp:time``)."""

START_TIMEOUT_S = 30.0


def time_server_command() -> tuple[str, ...]:
    """``mcp-server-time`` run by this interpreter (the test extra installs it), pinned to UTC so answers
    do not depend on the machine's zone."""
    return (sys.executable, "-m", "mcp_server_time", "--local-timezone", "UTC")


class McpBridge:
    """One MCP server over stdio, its tools as host :class:`~hookspecs.services.ToolDefinition` values.

    Use as ``async with McpBridge(name, command) as bridge: bridge.tools``. Raises
    :class:`~ptc_plus.evaluation.errors.McpServerFailed` on entry when the server does not start or list.
    """

    def __init__(self, name: str, command: Sequence[str], *, cwd: Path | None = None, structured: bool = True) -> None:
        self.name = name
        self.command = tuple(command)
        self.structured = structured
        self._cwd = cwd
        self._session: ClientSession | None = None
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self.tools: list[ToolDefinition] = []

    @classmethod
    def time_server(cls, *, structured: bool = True) -> McpBridge:
        return cls(TIME_SERVER, time_server_command(), structured=structured)

    @property
    def running(self) -> bool:
        """Whether the serving task still holds the server."""
        return self._task is not None and not self._task.done()

    async def __aenter__(self) -> McpBridge:
        ready: asyncio.Future[list[mt.Tool]] = asyncio.get_running_loop().create_future()
        self._task = asyncio.create_task(self._serve(ready), name=f"mcp-bridge-{self.name}")
        try:
            listed = await asyncio.wait_for(asyncio.shield(ready), START_TIMEOUT_S)
        except BaseException as exc:
            await self.aclose()
            if isinstance(exc, McpServerFailed):
                raise
            if isinstance(exc, Exception):
                raise McpServerFailed(command=" ".join(self.command), detail=f"{type(exc).__name__}: {exc}") from exc
            raise
        self.tools = [self._definition(t) for t in listed]
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Stop the server: the serving task leaves the session and the stdio client (which ends the process)."""
        self._stop.set()
        if self._task is not None:
            with contextlib.suppress(Exception):
                await self._task

    async def _serve(self, ready: asyncio.Future[list[mt.Tool]]) -> None:
        params = StdioServerParameters(
            command=self.command[0], args=list(self.command[1:]), cwd=str(self._cwd) if self._cwd else None
        )
        try:
            async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
                await session.initialize()
                listed = await _all_tools(session)
                self._session = session
                if not ready.done():
                    ready.set_result(listed)
                await self._stop.wait()
        except Exception as exc:
            if not ready.done():
                ready.set_exception(
                    McpServerFailed(command=" ".join(self.command), detail=f"{type(exc).__name__}: {exc}")
                )
        finally:
            self._session = None

    def _definition(self, listed: mt.Tool) -> ToolDefinition:
        spec = ToolSpec(
            name=listed.name,
            description=listed.description or "",
            input_schema=_plain(listed.input_schema) or {"type": "object"},
            output_schema=_plain(listed.output_schema) if listed.output_schema and self.structured else None,
            source=f"mcp:{self.name}",
        )
        name = listed.name

        async def handler(arguments: JSONObject, context: ToolContext) -> JSONValue:
            session = self._session
            if session is None:
                failed = McpToolFailed(tool=name, detail="the server is not running")
                raise ToolFailure(failed.code, failed.message())
            try:
                result = await session.call_tool(name, dict(arguments))
            except Exception as exc:
                failed = McpToolFailed(tool=name, detail=f"{type(exc).__name__}: {exc}")
                raise ToolFailure(failed.code, failed.message()) from None
            text = "\n".join(c.text for c in result.content if isinstance(c, mt.TextContent))
            if result.is_error:
                failed = McpToolFailed(tool=name, detail=text or "-")
                raise ToolFailure(failed.code, failed.message())
            if result.structured_content is not None and self.structured:
                structured: JSONValue = _plain(result.structured_content)
                return structured
            try:
                parsed: JSONValue = orjson.loads(text)
            except orjson.JSONDecodeError:
                return text
            return parsed

        return ToolDefinition(spec=spec, handler=handler)


async def _all_tools(session: ClientSession) -> list[mt.Tool]:
    found: list[mt.Tool] = []
    cursor: str | None = None
    while True:
        page = await session.list_tools(params=mt.PaginatedRequestParams(cursor=cursor) if cursor else None)
        found.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            return found


def _plain(value: Any) -> Any:
    """``value`` as plain JSON (the SDK hands out dicts that may hold non-JSON leaves)."""
    if value is None:
        return None
    return orjson.loads(orjson.dumps(value, default=str))
