"""One ``run_code`` run from spawn to settlement: the host's half of the conversation.

The run owns the wall-clock budget (spawn, program and nested calls
included), validates every frame against the run's state (call ids in
sequence, tool names in the namespace, pending count and bytes), keeps the
output ledger, answers calls through a :class:`~ptc_plus.runtime.lane.Lane`
and discovery requests through a :class:`~ptc_plus.runtime.discovery.DiscoveryDesk`
(calls and discovery requests share one id sequence and the pending limits),
and turns whatever happens into a :class:`~ptc_plus.runtime.outcome.RunOutcome`.
It settles only after the child's process group is killed, the process
has exited and its output is drained (bounded by the grace period) — except
a kernel-mode cell that ended with ``done``: its worker is kept
alive for the next cell (:attr:`ProgramRun.kept_worker`), its descendants killed. On
timeout or abort, or when it refused one of the program's frames, it also
cancels the nested calls still running, giving them the same grace (ADR 0051);
on a normal end it leaves them to the host's drain, bounded by the run's
deadline (:meth:`~ptc_plus.runtime.lane.NestedLane.expire`, ADR 0087).

Replies held for the program count against its pending bytes (ADR 0041,
0051): a request's own bytes count until its reply exists, the reply's
until its last byte is in the pipe. A reply that would make the replies
the program has not read exceed ``max_message_bytes`` ends the run with
outcome ``protocol`` (replies of at most 64 KiB always go: the pending
count bounds them), so a program that stops reading holds at most that
much host memory and its queued calls are abandoned, not executed. A
single reply larger than ``max_reply_bytes`` becomes a ``result-too-large``
``ToolCallError`` in the program.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import orjson

from hookspecs import JSONValue, ToolResult
from ptc_plus.i18n import message
from ptc_plus.runtime import values
from ptc_plus.runtime.cgroup import RunCgroup
from ptc_plus.runtime.channel import ControlChannel
from ptc_plus.runtime.descendants import children, kill_descendants
from ptc_plus.runtime.discovery import Answer, DiscoveryDesk, DiscoverySource
from ptc_plus.runtime.errors import DiscoveryUnavailable
from ptc_plus.runtime.executor import ProcessCap
from ptc_plus.runtime.lane import ExpiringLane, Lane
from ptc_plus.runtime.launcher import Launcher, SandboxUnavailableError
from ptc_plus.runtime.ledger import HostLedger, OutputBudgetExceeded, OutputObserver
from ptc_plus.runtime.outcome import OutcomeKind, RunFailure, RunOutcome, outcome_kinds
from ptc_plus.runtime.process import ChildGone, WorkerProcess
from ptc_plus.runtime.protocol import (
    VERSION,
    Call,
    ChildFrame,
    Discover,
    Done,
    Log,
    ProtocolViolation,
    Ready,
    Repl,
    ValueRefused,
)
from ptc_plus.runtime.protocol import encode as encode_frame
from ptc_plus.runtime.run_limits import ResolvedTimeout
from ptc_plus.runtime.worker import messages as worker_messages

_CHILD_KINDS = outcome_kinds("reported")
_VALUE_LIMIT_KEYS = ("max_message_bytes", "max_output_bytes", "memory_bytes")
_CANCELLING = outcome_kinds("cancels")
"""Kinds on which nested calls still running are cancelled rather than drained by the host (so are they
when the host refused one of the program's frames: it stops serving a program that broke the protocol)."""
_OUTPUT_TURNS = 3
"""Loop turns a kept kernel's stdout/stderr get to be read after ``done`` (one read, one callback, spare)."""
_SMALL_REPLY = 1 << 16
"""Replies up to this size (one pipe buffer) never end a run as unread: the pending count bounds them."""


ReplHandler = Callable[[str, str | None, tuple[str, str] | None], tuple[bool, JSONValue]]
"""Answers a kernel cell's ``repl`` frame synchronously: ``(op, name, volatile) -> (ok, value)``,
where a refusal is ``(False, {"code": str, "message": str})``. Should it raise, the program's
request fails with code ``repl-failed``."""


@attrs.frozen(kw_only=True)
class KernelBoot:
    """What makes a run a kernel-mode cell: the ``kernel`` field of its ``boot`` frame."""

    first_id: int
    """The cell's first request id: the previous cell's :attr:`ProgramRun.next_id` (1 for a new kernel)."""
    drop: tuple[str, ...] = ()
    """Names deleted from the kernel's namespace before the cell."""
    bindings: tuple[tuple[str, str], ...] | None = None
    """``(name, module source)`` executed into the namespace, in order, before the cell; ``None``: none."""
    turned_off: tuple[tuple[str, int], ...] = ()
    """``(tool name, refresh number)``: tools a capability refresh turned off, so that a reference held
    from an earlier cell is refused naming that refresh (ADR 0068)."""


@attrs.frozen(kw_only=True)
class RunRequest:
    code: str
    workspace: Path
    tool_names: tuple[str, ...] = ()
    off_names: tuple[str, ...] = ()
    """Tools the session's plan keeps from the program: named so when the program reaches for one."""
    timeout: ResolvedTimeout
    protected: tuple[Path, ...] = ()
    """Existing paths inside the workspace bound read-only under a confined policy (ADR 0040)."""
    discovery: DiscoverySource = attrs.field(factory=DiscoveryUnavailable, eq=False)
    observer: OutputObserver | None = attrs.field(default=None, eq=False)
    """Sees the output the ledger keeps as it arrives (ADR 0064); the outcome does not depend on it."""
    kernel: KernelBoot | None = None
    """Run the code as a cell of a kernel (a worker that keeps its namespace); ``None``: one-shot."""


class ProgramRun:
    """A single run; call :meth:`execute` once.

    With ``request.kernel`` the run is a cell: it uses ``worker`` (a kernel kept by an earlier
    cell, alive) or acquires a fresh one, answers ``repl`` frames through ``repl`` (without a
    handler such a frame is a protocol violation), and when the cell ends with ``done`` keeps the
    worker (:attr:`kept_worker`, with :attr:`next_id` for the next cell's ``first_id``). On any
    other end the worker is stopped, as for a one-shot run.
    """

    def __init__(
        self,
        request: RunRequest,
        launcher: Launcher,
        lane: Lane | None,
        cancelled: asyncio.Event | None = None,
        *,
        worker: WorkerProcess | None = None,
        repl: ReplHandler | None = None,
    ) -> None:
        self._request = request
        self._worker = worker
        self._repl = repl
        self.kept_worker: WorkerProcess | None = None
        """Kernel mode: the live worker after a cell that ended with ``done``; ``None`` otherwise."""
        self._limits = launcher.limits
        self._launcher = launcher
        self._lane = lane
        self._cancelled = cancelled or asyncio.Event()
        self._ledger = HostLedger(self._limits.max_output_bytes, request.observer)
        self._names = frozenset(request.tool_names)
        self._next_id = request.kernel.first_id if request.kernel is not None else 1
        self._pending: dict[int, int] = {}
        """Requests not answered yet, or whose reply is not in the pipe yet: id → request bytes (0 once answered)."""
        self._pending_bytes = 0
        self._held = 0
        """Bytes of replies queued for the child and not yet in the pipe."""
        self._abandoned: tuple[tuple[str, str], ...] = ()
        self._refused = False
        """The run ended because the host refused a frame (``protocol``, or ``invalid-output`` over the bounds)."""
        self._settled: asyncio.Future[RunFailure | Done] = asyncio.get_running_loop().create_future()
        self._channel: ControlChannel | None = None
        self._desk = DiscoveryDesk(request.discovery, self._answer)
        self._cgroup: RunCgroup | None = None

    @property
    def next_id(self) -> int:
        """The id the worker's next request will carry (a kernel's next cell starts there)."""
        return self._next_id

    async def execute(self) -> RunOutcome:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self._request.timeout.seconds
        worker: WorkerProcess | None = None
        result: RunFailure | Done | None = None
        try:
            try:
                async with asyncio.timeout_at(deadline):
                    worker = self._worker or await self._launcher.acquire(
                        self._request.workspace, self._request.protected
                    )
                    self._cgroup = worker.cgroup
                    result = await self._converse(worker)
            except TimeoutError:
                result = RunFailure(kind=OutcomeKind.TIMEOUT, params={"seconds": f"{self._request.timeout.seconds:g}"})
            except SandboxUnavailableError as error:
                params = {"policy": str(self._limits.policy), "detail": error.detail}
                result = RunFailure(kind=OutcomeKind.SANDBOX_UNAVAILABLE, params=params)
            except ChildGone:
                result = RunFailure(
                    kind=OutcomeKind.WORKER_EXIT, params={"detail": message("runtime.detail.exited_before_ready")}
                )
            except ProtocolViolation as violation:
                result = _violation_failure(violation)
        finally:
            self._settle(RunFailure(kind=OutcomeKind.ABORT))
            self._desk.close()
            # On timeout or abort (or when this task itself is cancelled) the nested calls still running are
            # cancelled while the process stops: both within the grace, so the run settles at its deadline.
            # So are they when the host refused a frame: otherwise the host would go on admitting the calls
            # a flooding program queued while the process is being stopped.
            stopping = [self._finish(worker, result)] if worker is not None else []
            cancels = self._refused or result is None or (isinstance(result, RunFailure) and result.kind in _CANCELLING)
            if cancels and self._lane is not None:
                stopping.append(self._cancel_nested(self._lane))
            elif isinstance(self._lane, ExpiringLane):
                # A normal end: the host drains admitted calls once the outer call settles, but only until
                # the run's deadline, which holds for the whole run, drain included (ADR 0087).
                self._lane.expire(deadline, self._limits.grace_s)
            if stopping:
                await asyncio.gather(*stopping)
        return self._outcome(result)

    async def _cancel_nested(self, lane: Lane) -> None:
        self._abandoned = await lane.cancel(self._limits.grace_s)

    # -- conversation ---------------------------------------------------------

    async def _converse(self, worker: WorkerProcess) -> RunFailure | Done:
        self._channel = worker.channel
        worker.attach_output(self._raw_output)
        worker.channel.attach(self._on_frame, self._on_violation)
        worker.channel.send(self._boot())
        aborted = asyncio.ensure_future(self._cancelled.wait())
        closed = asyncio.ensure_future(asyncio.shield(worker.channel.closed))
        try:
            waiters: list[asyncio.Future[Any]] = [self._settled, aborted, closed]
            await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
        finally:
            aborted.cancel()
            closed.cancel()
        if self._settled.done():
            return self._settled.result()
        if self._cancelled.is_set():
            return RunFailure(kind=OutcomeKind.ABORT)
        # The channel closed without ``done``: give the process its grace to exit, then report it.
        await worker.wait_exit(self._limits.grace_s)
        detail = worker.exit_detail()
        if worker.alive:
            detail = message("runtime.detail.channel_closed")
        return RunFailure(kind=OutcomeKind.WORKER_EXIT, params={"detail": detail})

    def _boot(self) -> dict[str, Any]:
        limits = self._limits
        cgroup_caps = self._launcher.process_cap is ProcessCap.CGROUP
        return {
            "type": "boot",
            "version": VERSION,
            "code": self._request.code,
            "tools": sorted(self._names),
            "off": sorted(self._request.off_names),
            "limits": {
                "memory_bytes": limits.memory_bytes,
                "cpu_seconds": limits.cpu_seconds,
                "open_files": limits.open_files,
                # Inside a run cgroup pids.max counts the run's processes; RLIMIT_NPROC would count the user's
                # (unless the executor's own threads share the cgroup, ADR 0127).
                "max_processes": None if self._cgroup is not None and cgroup_caps else limits.max_processes,
                "max_file_bytes": limits.max_file_bytes,
                "max_pending_calls": limits.max_pending_calls,
                "max_output_bytes": limits.max_output_bytes,
                "max_message_bytes": limits.max_message_bytes,
            },
            "messages": {key: message(key) for key in worker_messages.template_keys()},
            **self._kernel_field(),
        }

    def _kernel_field(self) -> dict[str, Any]:
        kernel = self._request.kernel
        if kernel is None:
            return {}
        bindings = None if kernel.bindings is None else [[name, source] for name, source in kernel.bindings]
        turned_off = [[name, sequence] for name, sequence in kernel.turned_off]
        field = {"first_id": kernel.first_id, "drop": list(kernel.drop), "bindings": bindings, "turned_off": turned_off}
        return {"kernel": field}

    def _settle(self, result: RunFailure | Done) -> None:
        if not self._settled.done():
            self._settled.set_result(result)

    def _violation(self, reason: str, **params: object) -> None:
        self._on_violation(ProtocolViolation(reason, **params))

    def _on_violation(self, violation: ProtocolViolation) -> None:
        if not self._settled.done():
            self._refused = True
            self._settle(_violation_failure(violation))

    def _raw_output(self, stream: str, data: bytes) -> None:
        try:
            self._ledger.add_raw(stream, data)
        except OutputBudgetExceeded:
            self._output_limit()

    def _output_limit(self) -> None:
        self._settle(self._output_limit_failure())

    def _output_limit_failure(self) -> RunFailure:
        return RunFailure(kind=OutcomeKind.OUTPUT_LIMIT, params={"limit": self._limits.max_output_bytes})

    def _on_frame(self, frame: ChildFrame) -> None:
        if self._settled.done():
            return
        if isinstance(frame, Call):
            self._on_call(frame)
        elif isinstance(frame, Log):
            try:
                for stream, text in frame.entries:
                    self._ledger.add(stream, text)
            except OutputBudgetExceeded:
                self._output_limit()
        elif isinstance(frame, Discover):
            if self._admit(frame.id, frame.size):
                self._desk.submit(frame.id, frame.method, frame.args)
        elif isinstance(frame, Repl):
            self._on_repl(frame)
        elif isinstance(frame, Done):
            self._settle(frame)
        elif isinstance(frame, Ready):
            self._violation("ready_twice")

    def _on_call(self, call: Call) -> None:
        lane = self._lane
        if call.id == self._next_id and (call.tool not in self._names or lane is None):
            self._violation("unknown_tool", tool=call.tool)
        elif self._admit(call.id, call.size) and lane is not None:
            lane.submit(call.tool, call.args, functools.partial(self._reply, call.id))

    def _on_repl(self, frame: Repl) -> None:
        handler = self._repl
        if handler is None or self._request.kernel is None:
            self._violation("repl_unexpected")
        elif self._admit(frame.id, frame.size):
            try:
                answer = handler(frame.op, frame.name, frame.volatile)
            except Exception as error:  # a bug in the handler fails this one request, not the channel
                answer = (False, {"code": "repl-failed", "message": f"{type(error).__name__}: {error}"})
            self._answer(frame.id, answer)

    def _admit(self, request_id: int, size: int) -> bool:
        """Check a call's or discovery request's id and the pending limits; count it as pending if fine."""
        limits = self._limits
        if request_id != self._next_id:
            self._violation("unknown_id", id=request_id, expected=self._next_id)
        elif len(self._pending) >= limits.max_pending_calls:
            self._violation("too_many_pending", limit=limits.max_pending_calls)
        elif self._pending_bytes + size > limits.max_message_bytes:
            self._violation("pending_bytes", limit=limits.max_message_bytes)
        else:
            self._next_id += 1
            self._pending[request_id] = size
            self._pending_bytes += size
            return True
        return False

    # -- replies ----------------------------------------------------------------

    # A request stays pending until its reply has entered the pipe, not merely been queued:
    # a child that never reads cannot make the host buffer more than max_pending_calls replies,
    # nor replies of more than max_message_bytes in all (ADR 0041, 0051).

    def _reply(self, child_id: int, result: ToolResult) -> None:
        if self._serving(child_id):
            self._queue(child_id, self._reply_frame(child_id, result))

    def _answer(self, child_id: int, answer: Answer) -> None:
        if self._serving(child_id):
            self._queue(child_id, self._answer_frame(child_id, answer))

    def _serving(self, child_id: int) -> bool:
        """Whether the run still answers the program; if not, request ``child_id`` stops counting as pending."""
        if self._settled.done() or self._channel is None:
            self._release(child_id)
            return False
        return True

    def _queue(self, child_id: int, frame: bytes) -> None:
        """Hold ``frame`` for the child until it is in the pipe, or end the run if the program does not read."""
        assert self._channel is not None
        # The reply takes the place of its request in the pending bytes.
        self._pending_bytes -= self._pending.get(child_id, 0)
        self._pending[child_id] = 0
        size, limit = len(frame), self._limits.max_message_bytes
        # A small reply always goes (max_pending_calls bounds how many): an answer to a cheap call
        # does not end the run because a large one before it is still being read.
        if size > _SMALL_REPLY and self._held + size > limit:
            self._release(child_id)
            self._violation("unread_replies", size=size, held=self._held, limit=limit)
            return
        self._held += size
        self._channel.send_bytes(frame, functools.partial(self._flushed, child_id, size))

    def _flushed(self, child_id: int, size: int) -> None:
        self._held -= size
        self._release(child_id)

    def _release(self, child_id: int) -> None:
        self._pending_bytes -= self._pending.pop(child_id, 0)

    def _value_frame(self, child_id: int, value: Any, too_large: str) -> bytes | tuple[str, str]:
        """The ``ok`` reply carrying ``value``, or why it cannot go: ``("invalid-result", detail)`` when it is
        not lossless, ``("result-too-large", text)`` (catalog key ``too_large``) over ``max_reply_bytes``."""
        try:
            values.check(value)
        except values.NotLossless as refused:
            return "invalid-result", str(refused)
        # Type and id first: a child that cannot decode the rest still knows which request failed.
        frame = encode_frame({"type": "reply", "id": child_id, "ok": True, "value": value})
        limit = self._limits.max_reply_bytes
        if len(frame) <= limit:
            return frame
        return "result-too-large", message(too_large, size=len(frame), limit=limit)

    def _answer_frame(self, child_id: int, answer: Answer) -> bytes:
        ok, body = answer
        if ok:
            sent = self._value_frame(child_id, body, "runtime.detail.discovery_result_too_large")
            if isinstance(sent, bytes):
                return sent
            body = {"code": sent[0], "message": sent[1]}
        return encode_frame({"type": "reply", "id": child_id, "ok": False, "error": body})

    def _reply_frame(self, child_id: int, result: ToolResult) -> bytes:
        if result.ok and result.metadata.get("is_error") is not True:
            sent = self._value_frame(child_id, result.value, "runtime.detail.result_too_large")
            if isinstance(sent, bytes):
                return sent
            code, text = sent
            if code == "invalid-result":
                text = message("runtime.detail.invalid_result", detail=text)
        elif result.error is not None:
            code, text = result.error.code, result.error.message
        else:
            # An ok result flagged ``is_error`` (e.g. MCP) or a bare non-ok status without details.
            code, text = ("is-error" if result.ok else str(result.status)), ""
        data = dict(result.error.data) if result.error is not None else {}
        failure = {"tool_name": result.tool, "code": code, "message": text, "call_id": result.call_id, "data": data}
        with contextlib.suppress(TypeError, orjson.JSONEncodeError):
            return encode_frame({"type": "reply", "id": child_id, "ok": False, "error": failure})
        return encode_frame({"type": "reply", "id": child_id, "ok": False, "error": {**failure, "data": {}}})

    # -- settlement ---------------------------------------------------------------

    async def _finish(self, worker: WorkerProcess, result: RunFailure | Done | None) -> None:
        if isinstance(result, Done) and self._request.kernel is not None and worker.alive:
            # The cell's orphans go, the kernel stays for the next cell. Under a sandbox the
            # worker's pid is the sandbox's, which has the kernel itself below it.
            kernel_pid = interpreter_pid(worker.pid, self._limits.python)
            if kernel_pid is not None:
                kill_descendants(kernel_pid)
            # Output the cell wrote to fd 1/2 before ``done`` is in those pipes already: let the
            # loop read what is there before this run's ledger closes.
            for _ in range(_OUTPUT_TURNS):
                await asyncio.sleep(0)
            self.kept_worker = worker
        elif isinstance(result, Done):
            # The child waits after ``done``, holding the program's orphans (ADR 0044): kill them, then
            # let it exit on its own (its exit overlaps the host's work) before the final stop.
            kill_descendants(worker.pid)
            worker.channel.close_writer()
            await worker.wait_exit(self._limits.grace_s)
        if self.kept_worker is None:
            await worker.stop(self._limits.grace_s)
        for stream in ("fd1", "fd2"):
            with contextlib.suppress(OutputBudgetExceeded):
                self._ledger.add_raw(stream, b"", final=True)

    def _outcome(self, result: RunFailure | Done | None) -> RunOutcome:
        calls = self._lane.count if self._lane is not None else 0
        notes: tuple[str, ...] = ()
        clamped = self._request.timeout.clamped_from
        if clamped is not None:
            notes = (
                message(
                    "runtime.note.timeout_clamped", requested=f"{clamped:g}", cap=f"{self._request.timeout.seconds:g}"
                ),
            )
        grace = f"{self._limits.grace_s:g}"
        for call_id, tool in self._abandoned:
            notes += (message("runtime.note.nested_abandoned", call_id=call_id, tool=tool, grace=grace),)
        failure = self._failure(result)
        value = None
        if failure is None and isinstance(result, Done):
            # The value was decoded by orjson and depth-checked when its frame was parsed (ADR 0051):
            # it is lossless, and walking it again here would cost the host time and memory unbounded.
            try:
                self._ledger.charge(len(orjson.dumps(result.value)))
                value = result.value
            except orjson.JSONEncodeError as error:
                failure = RunFailure(kind=OutcomeKind.INVALID_OUTPUT, params={"detail": str(error)})
            except OutputBudgetExceeded:
                failure = self._output_limit_failure()
        if failure is None and self._ledger.over:
            failure = self._output_limit_failure()
        if failure is not None:
            failure = self._ledger.fit_failure(failure)  # diagnostics share the output budget (ADR 0052)
        volatile = result.volatile if isinstance(result, Done) else None
        return RunOutcome(
            value=value, failure=failure, logs=self._ledger.entries(), calls=calls, notes=notes, volatile=volatile
        )

    def _failure(self, result: RunFailure | Done | None) -> RunFailure | None:
        if result is None:
            return RunFailure(kind=OutcomeKind.ABORT)
        if isinstance(result, RunFailure):
            return result
        if result.ok:
            return None
        error = result.error or {}
        try:
            kind = OutcomeKind(str(error.get("kind")))
        except ValueError:
            kind = OutcomeKind.PROTOCOL
        if kind not in _CHILD_KINDS:
            detail = ProtocolViolation("done_kind", kind=str(kind)).detail
            return RunFailure(kind=OutcomeKind.PROTOCOL, params={"detail": detail})
        text = str(error.get("message", ""))
        if kind is OutcomeKind.EXCEPTION:
            tool_name = error.get("tool_name")
            raised = str(error.get("type", "Exception"))
            memory = raised == "MemoryError"  # name the limit the program ran into, and its value
            params: dict[str, Any] = {"type": raised, "message": text}
            if memory:  # MemoryError's text is mostly empty: the clause after the limit only when it says something
                params = {"type": raised, "message": f": {text}" if text else "", "limit": self._limits.memory_bytes}
            return RunFailure(
                kind=kind,
                params=params,
                traceback=str(error.get("traceback", "")) or None,
                tool_name=tool_name if isinstance(tool_name, str) else None,
                template="runtime.outcome.memory-error" if memory else None,
            )
        if kind is OutcomeKind.OUTPUT_LIMIT:
            return self._value_too_large(error) or self._output_limit_failure()
        return RunFailure(kind=kind, params={"detail": text})

    def _value_too_large(self, error: dict[str, Any]) -> RunFailure | None:
        """The child's own ``output-limit`` for the program's value: its size (at least) and the key that
        stopped it; ``None`` when the frame does not say (then the output budget is named)."""
        size, key = error.get("size"), error.get("key")
        if type(size) is not int or size < 0 or key not in _VALUE_LIMIT_KEYS:
            return None
        limits = self._limits
        if key == "memory_bytes":
            limit, template = limits.memory_bytes, "runtime.outcome.value-unencodable"
        else:
            limit = limits.max_message_bytes if key == "max_message_bytes" else limits.max_output_bytes
            template = "runtime.outcome.value-too-large"
        return RunFailure(
            kind=OutcomeKind.OUTPUT_LIMIT, params={"size": size, "limit": limit, "setting": key}, template=template
        )


def interpreter_pid(pid: int, python: str) -> int | None:
    """The shallowest process at or below ``pid`` running ``python`` (the worker itself, inside or
    outside a sandbox); ``None`` when none is found."""
    level = [pid]
    seen: set[int] = set()
    while level:
        for candidate in sorted(level):
            with contextlib.suppress(OSError):
                if os.readlink(f"/proc/{candidate}/exe") == python:
                    return candidate
        seen.update(level)
        level = sorted({child for parent in level for child in children(parent)} - seen)
    return None


def _violation_failure(violation: ProtocolViolation) -> RunFailure:
    """A frame over the value bounds is ``invalid-output`` (ADR 0051); any other breach is ``protocol``."""
    kind = OutcomeKind.INVALID_OUTPUT if isinstance(violation, ValueRefused) else OutcomeKind.PROTOCOL
    return RunFailure(kind=kind, params={"detail": violation.detail})
