"""Nested calls of one run: ids, submission order, and the bridge to the host's dispatch.

Every ``call`` frame becomes a :class:`~hookspecs.ToolCall` with id
``<outer>:ptc:<n>`` (n = 1, 2, ... in submission order) dispatched through
``HostServices.dispatch``: the host's guards, validation, ``tool-execute``
seam and ordered scheduler do the rest (prepare in submission order,
``parallel`` bodies overlap, ``exclusive`` drains and holds, commit in
order). Dispatches are started as tasks in submission order, so the host
sees them in that order. With ``sequential`` (``PTC_SEQUENTIAL=true``) each
dispatch waits for the previous one to settle.

The lane does not wait for its calls when the run settles: the host
abandons queued ones and drains admitted ones when the outer call settles.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

from hookspecs import HostServices, JSONObject, ToolCall, ToolResult

ReplyHandler = Callable[[ToolResult], None]


class NestedLane:
    def __init__(self, services: HostServices, outer: ToolCall, *, sequential: bool = False) -> None:
        self._services = services
        self._outer = outer
        self._sequential = sequential
        self._count = 0
        self._previous: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def count(self) -> int:
        """Calls submitted so far."""
        return self._count

    def submit(self, tool: str, arguments: JSONObject, on_settled: ReplyHandler) -> str:
        """Dispatch one nested call; ``on_settled`` receives its result. Returns the nested call id."""
        self._count += 1
        call = ToolCall(
            call_id=f"{self._outer.call_id}:ptc:{self._count}",
            tool=tool,
            arguments=arguments,
            caller=self._outer.caller,
            parent_call_id=self._outer.call_id,
        )
        task = asyncio.create_task(self._dispatch(call, on_settled, self._previous if self._sequential else None))
        self._previous = task
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return call.call_id

    async def _dispatch(self, call: ToolCall, on_settled: ReplyHandler, after: asyncio.Task[None] | None) -> None:
        if after is not None:
            with contextlib.suppress(BaseException):
                await asyncio.shield(after)
        result = await self._services.dispatch(call)
        on_settled(result)

    @property
    def outstanding(self) -> int:
        return len(self._tasks)

    async def drain(self) -> None:
        """Wait for every submitted call to settle (for hosts that do not drain nested calls themselves)."""
        while self._tasks:
            await asyncio.wait(set(self._tasks))
