"""Tool bodies that block (file and database I/O) run off the host's event loop."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from hookspecs.services import ToolContext, ToolHandler
from hookspecs.types import JSONObject, JSONValue


def in_thread(body: Callable[[JSONObject, ToolContext], JSONValue]) -> ToolHandler:
    """An async tool body running blocking ``body`` in a worker thread: no file, however slow, stalls the loop."""

    async def run(args: JSONObject, ctx: ToolContext) -> JSONValue:
        return await asyncio.to_thread(body, args, ctx)

    return run
