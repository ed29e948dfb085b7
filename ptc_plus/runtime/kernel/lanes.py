"""The two lanes of the REPL kernel: one records a cell's nested calls, one answers a replayed cell's.

:class:`RecordingLane` wraps the run's :class:`~ptc_plus.runtime.lane.NestedLane`: every
call still goes through the host; its canonical arguments and settled result are kept in
settlement order, and a call that never settled before the cell ended is recorded as
``discarded`` (it may have had an effect, so it can never be answered from the journal).
What one cell's calls would add to the journal is bounded (:data:`MAX_CELL_RECORD_BYTES`):
past it the lane keeps nothing more and says so (:attr:`RecordingLane.overflow`); the cell is
then volatile instead of journalling a line of unbounded size (ADR 0085).

:class:`ReplayLane` dispatches nothing. The replayed program must ask for exactly the calls
the journal holds, in submission order, with the same arguments; each is answered with its
recorded result. Anything else — another tool, other arguments, a call beyond the record, a
call recorded as ``discarded`` — is a divergence: the call gets an error and the replay is
marked diverged, so recovery contracts instead of trusting the rebuilt state (ADR 0081).
"""

from __future__ import annotations

import asyncio
from typing import Any

import orjson

from hookspecs import JSONObject, JSONValue, ResultStatus, ToolError, ToolResult
from hookspecs.serialization import canonical_bytes
from ptc_plus.runtime.kernel.journal import RecordedCall
from ptc_plus.runtime.lane import ExpiringLane, Lane, ReplyHandler

DIVERGED = "replay-diverged"
"""The error code a replayed program sees for a call the journal does not hold."""

MAX_CELL_RECORD_BYTES = 4 * 1024 * 1024
"""The encoded arguments and results of one cell's nested calls the journal keeps (ADR 0085)."""


def canonical(arguments: JSONObject) -> JSONObject:
    """``arguments`` with keys sorted at every level: the form calls are compared and journalled in."""
    value: JSONObject = orjson.loads(canonical_bytes(arguments))
    return value


def _size(value: object) -> int:
    try:
        return len(orjson.dumps(value))
    except (TypeError, orjson.JSONEncodeError):
        return 0  # not JSON: the host refuses it on the way to the program; nothing of it is journalled either


class RecordingLane:
    """Passes calls to ``inner`` and keeps what each settled to."""

    def __init__(self, inner: Lane, limit: int = MAX_CELL_RECORD_BYTES) -> None:
        self._inner = inner
        self._limit = limit
        self._bytes = 0
        self._submitted: dict[int, tuple[str, JSONObject]] = {}
        self._settled: list[RecordedCall] = []
        self.overflow: str | None = None
        """Why the calls are not recorded (their journal form passed the limit), or ``None``."""

    @property
    def count(self) -> int:
        return self._inner.count

    def submit(self, tool: str, arguments: JSONObject, on_settled: ReplyHandler) -> str:
        index = len(self._submitted) + 1
        # Copied before dispatch: a tool that mutates its arguments must not change the journal.
        copied = canonical(arguments) if self.overflow is None else {}
        self._count_bytes(_size(copied) + len(tool))
        self._submitted[index] = (tool, copied if self.overflow is None else {})

        def settled(result: ToolResult) -> None:
            if self.overflow is None:
                recorded = _recorded(index, tool, self._submitted[index][1], result)
                self._count_bytes(_size(recorded.value) + _size(recorded.error))
                if self.overflow is None:
                    self._settled.append(recorded)
            on_settled(result)

        return self._inner.submit(tool, arguments, settled)

    def _count_bytes(self, size: int) -> None:
        self._bytes += size
        if self.overflow is None and self._bytes > self._limit:
            self.overflow = f"its nested calls passed {self._limit} bytes of arguments and results"
            # Nothing more is kept: a cell of huge calls holds no copy of them on the host.
            self._settled.clear()
            self._submitted = {index: (tool, {}) for index, (tool, _args) in self._submitted.items()}

    async def cancel(self, grace: float) -> tuple[tuple[str, str], ...]:
        return await self._inner.cancel(grace)

    def expire(self, deadline: float, grace: float) -> None:
        """The cell ended normally: its calls still running drain only until ``deadline`` (ADR 0087)."""
        if isinstance(self._inner, ExpiringLane):
            self._inner.expire(deadline, grace)

    def calls(self) -> tuple[RecordedCall, ...]:
        """Settled calls in settlement order, then the ones that never settled as ``discarded`` (none after an
        :attr:`overflow`: the cell is volatile and never replayed)."""
        if self.overflow is not None:
            return ()
        done = {call.index for call in self._settled}
        discarded = [
            RecordedCall(index=index, tool=tool, arguments=arguments, status="discarded")
            for index, (tool, arguments) in sorted(self._submitted.items())
            if index not in done
        ]
        return (*self._settled, *discarded)


def _recorded(index: int, tool: str, arguments: JSONObject, result: ToolResult) -> RecordedCall:
    error: dict[str, Any] | None = None
    if result.error is not None:
        error = {"code": result.error.code, "message": result.error.message, "data": dict(result.error.data)}
    elif not result.ok:
        error = {"code": str(result.status), "message": "", "data": {}}
    value: JSONValue = result.value if result.ok else None
    return RecordedCall(
        index=index,
        tool=tool,
        arguments=arguments,
        status="ok" if result.ok else "error",
        value=value,
        error=error,
        is_error=result.metadata.get("is_error") is True,
    )


class ReplayLane:
    """Answers a replayed cell's calls from ``recorded``; dispatches nothing."""

    def __init__(self, recorded: tuple[RecordedCall, ...], outer_call_id: str = "replay") -> None:
        self._recorded = {call.index: call for call in recorded}
        self._outer = outer_call_id
        self._count = 0
        self.diverged: str | None = None
        """Why the replay stopped matching the journal (the first reason), or ``None``."""

    @property
    def count(self) -> int:
        return self._count

    def submit(self, tool: str, arguments: JSONObject, on_settled: ReplyHandler) -> str:
        self._count += 1
        call_id = f"{self._outer}:ptc:{self._count}"
        result = self._answer(call_id, tool, arguments)
        # Later, as a real dispatch would be: the run counts the request as pending before it is answered.
        asyncio.get_running_loop().call_soon(on_settled, result)
        return call_id

    def _answer(self, call_id: str, tool: str, arguments: JSONObject) -> ToolResult:
        recorded = self._recorded.get(self._count)
        if recorded is None:
            return self._diverge(call_id, tool, f"call {self._count} ({tool}) is not in the journal")
        if recorded.tool != tool or canonical(arguments) != recorded.arguments:
            return self._diverge(call_id, tool, f"call {self._count} asked for {tool}, the journal has {recorded.tool}")
        if recorded.status == "discarded":
            return self._diverge(call_id, tool, f"call {self._count} ({tool}) never settled: it cannot be replayed")
        if recorded.status == "ok":
            metadata: JSONObject = {"is_error": True} if recorded.is_error else {}
            return ToolResult(
                call_id=call_id, tool=tool, status=ResultStatus.OK, value=recorded.value, metadata=metadata
            )
        error = recorded.error or {}
        data = error.get("data")
        return ToolResult(
            call_id=call_id,
            tool=tool,
            status=ResultStatus.ERROR,
            error=ToolError(
                code=str(error.get("code", "")),
                message=str(error.get("message", "")),
                data=data if isinstance(data, dict) else {},
            ),
        )

    def finish(self) -> str | None:
        """After the replayed cell settled: why it did not match the journal, or ``None``."""
        if self.diverged is None and self._count < len(self._recorded):
            self.diverged = f"the replay made {self._count} of the {len(self._recorded)} journalled calls"
        return self.diverged

    def _diverge(self, call_id: str, tool: str, reason: str) -> ToolResult:
        if self.diverged is None:
            self.diverged = reason
        error = ToolError(code=DIVERGED, message=reason)
        return ToolResult(call_id=call_id, tool=tool, status=ResultStatus.ERROR, error=error, dispatched=False)

    async def cancel(self, grace: float) -> tuple[tuple[str, str], ...]:
        return ()
