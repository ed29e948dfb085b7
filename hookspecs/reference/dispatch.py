"""The dispatch pipeline shared by model tool calls and nested calls.

For each call, in submission order: take a lane ticket, resolve the tool
against the caller's *current* view, validate arguments, ask the guard
(preparation); then, when the lane admits it, log ``tool-started`` with a
detached copy of the arguments and run the ``tool-execute`` seam; then, in
commit order, pass the ``tool-result`` seam and log ``tool-settled``.
Calls refused in preparation still commit in order but are marked not
dispatched. Nested calls of one outer call share that call's nested lane;
when the outer call settles, that lane closes: queued calls are abandoned
(logged as ``tool-abandoned``, never as executed) and admitted ones are drained.
What the log keeps of a nested call's arguments and result is bounded
(:mod:`hookspecs.reference.log_bounds`), and arguments of more than
:data:`OFF_LOOP_BYTES` are validated in a thread, the lane's later calls waiting
their turn so preparation stays in submission order (ADR 0087).

Calls are known by their :data:`CallKey` — the caller's session and the call id —
never by the bare id: a call id is unique only within its session (ADR 0089), so two
sessions (independent, or parent and child) may run calls of the same id at once.
"""

from __future__ import annotations

import asyncio
import difflib
import functools
from collections.abc import Callable
from typing import Any, Protocol

import attrs
import orjson

from hookspecs.i18n import message
from hookspecs.reference.errors import HostError
from hookspecs.reference.facade import HookFacade, error_result
from hookspecs.reference.log_bounds import NestedLogBounds
from hookspecs.reference.registry import Compiled, ToolView, validation_errors
from hookspecs.reference.scheduler import LaneClosed, OrderedLane
from hookspecs.reference.session_log import Event
from hookspecs.services import HostServices, ToolContext, ToolDefinition, ToolHandler
from hookspecs.types import AgentRef, Concurrency, ResultStatus, ToolCall, ToolResult, ToolSpec

OFF_LOOP_BYTES = 64 * 1024
"""Arguments whose JSON is larger than this are validated in a thread, not on the event loop."""

LOG_REFUSALS = frozenset({"HOST-0105", "HOST-0106"})
"""The session log refused an event (a failed write, a broken log, a start that could not be recorded)."""

CallKey = tuple[str, str]
"""``(session id, call id)``: how the dispatcher knows a running call and its nested lane."""


def call_key(call: ToolCall) -> CallKey:
    return (call.caller.session_id, call.call_id)


def _pass_on(mine: asyncio.Future[None], _previous: asyncio.Future[None]) -> None:
    if not mine.done():
        mine.set_result(None)


def _retrieve(task: asyncio.Future[Any]) -> None:
    """Consume an abandoned body's outcome, so its eventual failure is not reported as never retrieved."""
    if not task.cancelled():
        task.exception()


class EventSink(Protocol):
    """Where dispatch events go: the caller's session, which logs and applies them."""

    def append(self, type_: str, data: dict[str, Any], *, durable: bool = False, defer: bool = False) -> Event: ...

    def flush(self) -> None:
        """Write what ``defer`` queued."""

    def refuse(self, reason: str) -> None:
        """Refuse every later event (HOST-0105 with ``reason``): the log can no longer vouch for its order."""


@attrs.frozen(kw_only=True)
class _Prepared:
    spec: ToolSpec | None
    handler: ToolHandler | None
    refused: ToolResult | None


class Dispatcher:
    """Runs calls through preparation, lanes, seams and the session log."""

    def __init__(
        self,
        facade: HookFacade,
        services: HostServices,
        view_for: Callable[[AgentRef], ToolView],
        sink_for: Callable[[AgentRef], EventSink],
        turn_for: Callable[[AgentRef], int],
        max_parallel: int,
    ) -> None:
        self._facade = facade
        self._services = services
        self._view_for = view_for
        self._sink_for = sink_for
        self._turn_for = turn_for
        self.max_parallel = max_parallel
        self._nested_lanes: dict[CallKey, OrderedLane] = {}
        self._live: dict[CallKey, tuple[asyncio.Event, asyncio.Task[ToolResult]]] = {}
        self._log_bounds = NestedLogBounds()

    def new_lane(self) -> OrderedLane:
        return OrderedLane(self.max_parallel)

    def cancel(self, session_id: str, call_id: str) -> bool:
        """Signal and cancel session ``session_id``'s running call ``call_id``; ``False`` if it is not running."""
        live = self._live.get((session_id, call_id))
        if live is None:
            return False
        live[0].set()
        live[1].cancel()
        return True

    async def dispatch(
        self, call: ToolCall, lane: OrderedLane, *, top_level: bool, offered: frozenset[str] | None = None
    ) -> ToolResult:
        """Run one call in ``lane``; never raises for tool failures.

        ``offered``: for a model's call, the tools its request offered; any other tool of the
        view is refused as unknown (tools left out of the model's list are reachable only
        through nested dispatch).
        """
        try:
            ticket = lane.ticket()
        except LaneClosed:
            return self._abandon(call)
        try:
            prepared = await self._prepare(call, offered, lane)
        except asyncio.CancelledError:
            lane.skip(ticket)  # never admitted: later calls must not wait for it
            self._abandon(call)
            raise
        concurrency = prepared.spec.concurrency if prepared.spec else Concurrency.PARALLEL
        log = self._sink_for(call.caller)
        started = settled = False

        def on_admit() -> None:
            nonlocal started
            if prepared.refused is None:
                # A nested start joins the group commit (ADR 0114): written by the body's task before the
                # body runs (with every start queued beside it), or with the next settle, whichever is first.
                try:
                    log.append("tool-started", self._started(call), defer=call.parent_call_id is not None)
                except HostError as refused:
                    if refused.code not in LOG_REFUSALS:
                        raise self._start_not_logged(call, log, refused) from refused
                    raise  # the log refused it itself and knows what it holds (nothing of this event)
                except Exception as exc:
                    raise self._start_not_logged(call, log, exc) from exc
                started = True

        async def body() -> ToolResult:
            if prepared.refused is not None:
                return prepared.refused
            assert prepared.spec is not None and prepared.handler is not None
            return await self._execute(call, prepared.spec, prepared.handler)

        def commit(result: ToolResult) -> ToolResult:
            nonlocal settled
            settled = True
            final = self._facade.tool_result(call, result, self._services)
            log.append(
                "tool-settled",
                {
                    "call_id": call.call_id,
                    "parent_call_id": call.parent_call_id,
                    "top_level": top_level,
                    "turn": self._turn_for(call.caller),
                    **self._log_bounds.settled(call, final),
                },
            )
            return final

        try:
            return await lane.run(ticket, concurrency, body, commit, on_admit)
        except LaneClosed:
            return self._abandon(call)
        except HostError as refused:
            if refused.code not in LOG_REFUSALS or call.parent_call_id is None:
                raise  # a model's or a direct call: its caller gets the typed error
            # A program waits for this nested call's reply: it gets the log's refusal as the call's error now,
            # instead of never (no result goes back as a success that its log does not hold, ADR 0114).
            return error_result(call, "not-logged", dispatched=started, detail=refused.message())
        except asyncio.CancelledError:
            # The dispatch itself was cancelled (its outer call or the host went away): a call that
            # started still gets its settle event, out of lane order, so the log never leaves it open;
            # one that never started is logged as abandoned, never as executed.
            if started and not settled:
                commit(error_result(call, "cancelled", dispatched=True))
            elif not started and not settled:
                self._abandon(call)
            raise

    async def dispatch_nested(self, call: ToolCall) -> ToolResult:
        """A nested call: joins its outer call's lane; abandoned once the outer call settled.

        The outer call is the caller session's call ``parent_call_id``: a call of that id in
        another session (a child's, or an unrelated one) is another call with another lane.
        """
        if call.parent_call_id is None:
            return self._abandon(call)
        parent = (call.caller.session_id, call.parent_call_id)
        if parent not in self._live:
            return self._abandon(call)
        lane = self._nested_lanes.setdefault(parent, self.new_lane())
        return await self.dispatch(call, lane, top_level=False)

    async def _prepare(self, call: ToolCall, offered: frozenset[str] | None, lane: OrderedLane) -> _Prepared:
        """Resolve, validate and guard ``call`` after every earlier call of ``lane`` was prepared.

        Small arguments are prepared at once, without leaving the loop, so most calls never wait; large
        ones are validated in a thread, and the lane's calls after them wait for their preparation.
        """
        previous = lane.preparing
        if previous is not None and previous.done():
            previous = None
        try:
            large = len(orjson.dumps(call.arguments)) > OFF_LOOP_BYTES
        except TypeError:  # not JSON: validation says what is wrong, quickly
            large = False
        if previous is None and not large:
            resolved = self._resolve(call, offered)
            if isinstance(resolved, _Prepared):
                return resolved
            definition, validator = resolved
            return self._checked(call, definition, validation_errors(definition.spec, call.arguments, validator))
        mine: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        lane.preparing = mine
        try:
            if previous is not None:
                await asyncio.wait([previous])
            resolved = self._resolve(call, offered)
            if isinstance(resolved, _Prepared):
                return resolved
            definition, validator = resolved
            if large:
                problems = await asyncio.to_thread(validation_errors, definition.spec, call.arguments, validator)
            else:
                problems = validation_errors(definition.spec, call.arguments, validator)
            return self._checked(call, definition, problems)
        finally:
            if previous is None or previous.done():
                mine.set_result(None)
            else:  # cancelled while waiting: the next call still waits for the one before this
                previous.add_done_callback(functools.partial(_pass_on, mine))

    def _resolve(self, call: ToolCall, offered: frozenset[str] | None) -> tuple[ToolDefinition, Compiled] | _Prepared:
        """The call's tool in the caller's current view and its compiled validator, or its refusal as unknown."""
        view = self._view_for(call.caller)
        definition = view.get(call.tool)
        if definition is None or (offered is not None and call.tool not in offered):
            names = sorted(offered) if offered is not None else view.names()
            close = ", ".join(difflib.get_close_matches(call.tool, names, n=3))
            detail = message("host.did-you-mean", names=close) if close else ""
            refused = error_result(call, "unknown-tool", dispatched=False, detail=detail)
            return _Prepared(spec=None, handler=None, refused=refused)
        return definition, view.validator(call.tool)

    def _checked(self, call: ToolCall, definition: ToolDefinition, problems: list[str]) -> _Prepared:
        spec = definition.spec
        if problems:
            refused = error_result(call, "invalid-arguments", dispatched=False, detail="; ".join(problems))
            return _Prepared(spec=spec, handler=None, refused=refused)
        refusal = self._facade.guard(call, spec, self._services)
        if refusal is not None:
            refused = error_result(call, "refused", dispatched=False, detail=f"{refusal.code}: {refusal.reason}")
            return _Prepared(spec=spec, handler=None, refused=refused)
        return _Prepared(spec=spec, handler=definition.handler, refused=None)

    async def _execute(self, call: ToolCall, spec: ToolSpec, handler: ToolHandler) -> ToolResult:
        cancelled = asyncio.Event()
        # The body travels with the call's own context to the innermost ``tool-execute`` step.
        context = ToolContext(call=call, services=self._services, cancelled=cancelled, body=handler)
        task = asyncio.ensure_future(self._body(call, spec, context))
        key = call_key(call)
        self._live[key] = (cancelled, task)
        try:
            try:
                result = await asyncio.shield(task)
            except asyncio.CancelledError:
                if not task.cancelled():
                    # The dispatcher itself was cancelled (e.g. host shutdown): stop the call, wait for its
                    # body to end, then propagate. Cancelled again meanwhile (a body that ignores it, after
                    # the canceller's grace), stop waiting: the body is abandoned, the call settles now.
                    cancelled.set()
                    task.cancel()
                    task.add_done_callback(_retrieve)
                    await asyncio.wait([task])
                    raise
                result = error_result(call, "cancelled", dispatched=True)
        finally:
            self._live.pop(key, None)
            lane = self._nested_lanes.pop(key, None)
            if lane is not None:
                await lane.close()
        return result

    async def _body(self, call: ToolCall, spec: ToolSpec, context: ToolContext) -> ToolResult:
        # The call's start, and the starts queued with it, are in the OS before its body runs (ADR 0114).
        self._sink_for(call.caller).flush()
        return await self._facade.tool_execute(call, spec, context)

    def _started(self, call: ToolCall) -> dict[str, object]:
        return {
            "call_id": call.call_id,
            "tool": call.tool,
            "parent_call_id": call.parent_call_id,
            **self._log_bounds.started(call),
        }

    def _start_not_logged(self, call: ToolCall, log: EventSink, exc: Exception) -> HostError:
        """The start of ``call`` could not be recorded: the call never runs, and the log refuses every later
        event. Whether the failed append queued the start is not known, so a later write could put a start
        without its settle, or a settle without its start, in the file (ADR 0114, ADR 0118)."""
        reason = f"{type(exc).__name__}: {exc}"
        log.refuse(f"the start of the call {call.call_id} could not be recorded ({reason})")
        return HostError("HOST-0106", tool=call.tool, call_id=call.call_id, reason=reason)

    def _abandon(self, call: ToolCall) -> ToolResult:
        result = error_result(call, "abandoned", dispatched=False)
        try:
            self._sink_for(call.caller).append(
                "tool-abandoned", {"call_id": call.call_id, "tool": call.tool, "parent_call_id": call.parent_call_id}
            )
        except HostError as refused:
            if refused.code not in LOG_REFUSALS or call.parent_call_id is None:
                raise
            # The log refuses every event now: the program still gets its reply (it never ran).
        assert result.status is ResultStatus.CANCELLED
        return result
