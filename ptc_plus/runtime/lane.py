"""Nested calls of one run: ids, submission order, and the bridge to the host's dispatch.

Every ``call`` frame becomes a :class:`~hookspecs.ToolCall` with id
``<outer>:ptc:<n>`` (n = 1, 2, ... in submission order) dispatched through
``HostServices.dispatch``: the host's guards, validation, ``tool-execute``
seam and ordered scheduler do the rest (prepare in submission order,
``parallel`` bodies overlap, ``exclusive`` drains and holds, commit in
order). Dispatches are started as tasks in submission order, so the host
sees them in that order. With ``sequential`` (``PTC_SEQUENTIAL=true``) each
dispatch waits for the previous one to settle. Right before its dispatch, a
call's keywords are mapped back to the tool's real argument names, read from
the caller's current view (:mod:`ptc_plus.runtime.arguments`).

The lane does not wait for its calls when the run settles: the host
abandons queued ones and drains admitted ones when the outer call settles.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

from hookspecs import HostServices, JSONObject, ResultStatus, ToolCall, ToolError, ToolResult
from ptc_plus.runtime.arguments import SpecLookup, real_arguments
from ptc_plus.runtime.errors import ArgumentConflict

ReplyHandler = Callable[[ToolResult], None]


class NestedLane:
    def __init__(self, services: HostServices, outer: ToolCall, *, sequential: bool = False) -> None:
        self._services = services
        self._outer = outer
        self._sequential = sequential
        self._count = 0
        self._previous: asyncio.Task[None] | None = None
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._specs = SpecLookup()
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def count(self) -> int:
        """Calls submitted so far."""
        return self._count

    def submit(self, tool: str, arguments: JSONObject, on_settled: ReplyHandler) -> str:
        """Dispatch one nested call; ``on_settled`` receives its result. Returns the nested call id."""
        self._count += 1
        call_id = f"{self._outer.call_id}:ptc:{self._count}"
        after = self._previous if self._sequential else None
        # The loop is looked up once: on Python 3.11 every get_running_loop() is a getpid() system call.
        loop = self._loop = self._loop or asyncio.get_running_loop()
        task = loop.create_task(self._dispatch(call_id, tool, arguments, on_settled, after))
        self._previous = task
        # Removed by the task itself when it ends, not by a done callback: a callback costs
        # every call one more event-loop turn (ADR 0019).
        self._tasks[call_id] = task
        return call_id

    async def _dispatch(
        self,
        call_id: str,
        tool: str,
        arguments: JSONObject,
        on_settled: ReplyHandler,
        after: asyncio.Task[None] | None,
    ) -> None:
        try:
            if after is not None:
                with contextlib.suppress(BaseException):
                    await asyncio.shield(after)
            outer = self._outer
            if arguments:
                try:
                    arguments = self._real_arguments(tool, arguments)
                except ArgumentConflict as conflict:
                    error = ToolError(code=conflict.code, message=conflict.message())
                    status = ResultStatus.ERROR
                    on_settled(ToolResult(call_id=call_id, tool=tool, status=status, error=error, dispatched=False))
                    return
            call = ToolCall(
                call_id=call_id, tool=tool, arguments=arguments, caller=outer.caller, parent_call_id=outer.call_id
            )
            on_settled(await self._services.dispatch(call))
        finally:
            self._tasks.pop(call_id, None)

    def _real_arguments(self, tool: str, arguments: JSONObject) -> JSONObject:
        try:
            spec = self._specs.get(self._services.tool_view(self._outer.caller), tool)
        except Exception:  # no view, no mapping: the host's own dispatch will say what is wrong
            return arguments
        return arguments if spec is None else real_arguments(spec, arguments)

    async def drain(self) -> None:
        """Wait for every submitted call to settle (for hosts that do not drain nested calls themselves)."""
        while True:
            # A task cancelled before its first step never runs its own clean-up: drop done ones here.
            live = [task for task in self._tasks.values() if not task.done()]
            if not live:
                self._tasks.clear()
                return
            await asyncio.wait(live)
