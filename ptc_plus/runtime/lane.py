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

The lane does not wait for its calls when the run settles normally: the
host abandons queued ones and drains admitted ones when the outer call
settles, and :meth:`NestedLane.expire` bounds that drain by the run's
deadline: calls still running then are cancelled, and one still running
after the termination grace is abandoned and reported (ADR 0087). On
timeout or abort the run calls :meth:`NestedLane.cancel` instead: every
unsettled dispatch is cancelled (the host abandons a queued call and
cancels an admitted one's body), and one still running after the
termination grace is abandoned and reported, so the deadline holds (ADR 0051).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Protocol, runtime_checkable

from hookspecs import HostServices, JSONObject, ResultStatus, ToolCall, ToolError, ToolResult
from ptc_plus.runtime.arguments import SpecLookup, real_arguments
from ptc_plus.runtime.errors import ArgumentConflict, DispatchFailed

ReplyHandler = Callable[[ToolResult], None]

_log = logging.getLogger(__name__)
_expiring: set[asyncio.Task[None]] = set()
"""Drain watchers running after their run returned: referenced here so they are not collected mid-wait."""


class Lane(Protocol):
    """What a run needs of the lane answering its program's calls: :class:`NestedLane` dispatches them
    through the host; the REPL kernel records them on the way or, replaying a journalled cell, answers them
    from the journal without dispatching anything (ADR 0081)."""

    @property
    def count(self) -> int:
        """Calls submitted so far."""
        ...

    def submit(self, tool: str, arguments: JSONObject, on_settled: ReplyHandler) -> str:
        """Take one call; ``on_settled`` receives its result later (never from inside this call)."""
        ...

    async def cancel(self, grace: float) -> tuple[tuple[str, str], ...]:
        """Cancel the calls not settled yet; ``(call id, tool)`` of those that ignored it."""
        ...


@runtime_checkable
class ExpiringLane(Protocol):
    """A lane that can bound the host's drain of its calls after a normal end (:meth:`NestedLane.expire`)."""

    def expire(self, deadline: float, grace: float) -> None: ...


class NestedLane:
    def __init__(self, services: HostServices, outer: ToolCall, *, sequential: bool = False) -> None:
        self._services = services
        self._outer = outer
        self._sequential = sequential
        self._count = 0
        self._previous: asyncio.Task[None] | None = None
        self._tasks: dict[str, tuple[asyncio.Task[None], str]] = {}
        """Calls not settled yet: call id → (dispatch task, tool name)."""
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
        self._tasks[call_id] = (task, tool)
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
                # Waits for the previous call however it ended, but not when this call is cancelled itself
                # (a timeout): suppressing that too would send the call to the host after all.
                await asyncio.wait([after])
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
            try:
                result = await self._services.dispatch(call)
            except Exception as failure:  # a host defect: settle the call, never leave the program waiting
                _log.exception("the host's dispatch raised for %s", call_id)
                failed = DispatchFailed(tool=tool, detail=f"{type(failure).__name__}: {failure}")
                error = ToolError(code=failed.code, message=failed.message())
                result = ToolResult(call_id=call_id, tool=tool, status=ResultStatus.ERROR, error=error)
            on_settled(result)
        finally:
            self._tasks.pop(call_id, None)

    def _real_arguments(self, tool: str, arguments: JSONObject) -> JSONObject:
        try:
            spec = self._specs.get(self._services.tool_view(self._outer.caller), tool)
        except Exception:  # no view, no mapping: the host's own dispatch will say what is wrong
            logging.getLogger(__name__).debug("no tool view for %s; arguments passed as given", tool, exc_info=True)
            return arguments
        return arguments if spec is None else real_arguments(spec, arguments)

    async def cancel(self, grace: float) -> tuple[tuple[str, str], ...]:
        """Cancel every call not settled yet (the run timed out or was aborted); ``(call id, tool)``
        of those that ignored it.

        The cancellation reaches the host's dispatch: a call still queued there
        never starts, an admitted one's body is cancelled. Bodies get ``grace``
        seconds to end. A dispatch still running then is cancelled once more, so
        a host waiting for its body gives up too, and is abandoned: not awaited,
        returned here for the result to report.
        """
        live = {call_id: (task, tool) for call_id, (task, tool) in self._tasks.items() if not task.done()}
        if not live:
            return ()
        for task, _tool in live.values():
            task.cancel()
        _done, pending = await asyncio.wait([task for task, _tool in live.values()], timeout=grace)
        for task in pending:
            task.cancel()
        return tuple((call_id, tool) for call_id, (task, tool) in live.items() if task in pending)

    def expire(self, deadline: float, grace: float) -> None:
        """The run ended normally: let the calls not settled yet run until ``deadline`` (loop time), no longer.

        Returns at once; a watcher left on the loop waits while the host
        drains them (it abandons queued ones and waits for admitted ones when
        the outer call settles) and, at ``deadline``, cancels those still
        running exactly as :meth:`cancel` does: a body gets ``grace`` seconds
        to end, then is abandoned and reported in the log (the run's result
        has gone already). The watcher ends as soon as every call settled.
        """
        live = [task for task, _tool in self._tasks.values() if not task.done()]
        if not live:
            return
        watcher = asyncio.get_running_loop().create_task(self._expire(live, deadline, grace))
        _expiring.add(watcher)
        watcher.add_done_callback(_expiring.discard)

    async def _expire(self, live: list[asyncio.Task[None]], deadline: float, grace: float) -> None:
        remaining = max(0.0, deadline - asyncio.get_running_loop().time())
        _done, pending = await asyncio.wait(live, timeout=remaining)
        if not pending:
            return
        for call_id, tool in await self.cancel(grace):
            _log.warning(
                "nested call %s (%s) ignored its cancellation at the run's deadline and was abandoned after %gs",
                call_id,
                tool,
                grace,
            )

    async def drain(self) -> None:
        """Wait for every submitted call to settle (for hosts that do not drain nested calls themselves)."""
        while True:
            # A task cancelled before its first step never runs its own clean-up: drop done ones here.
            live = [task for task, _tool in self._tasks.values() if not task.done()]
            if not live:
                self._tasks.clear()
                return
            await asyncio.wait(live)
