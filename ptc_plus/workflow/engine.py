"""Starting and owning workflow runs (ADR 0116).

:meth:`WorkflowEngine.start` is synchronous and checked: the script parses
and keeps the rules (:mod:`.check`), the requested caps are within the
deployment's, every provider named literally exists; what cannot start
raises a :class:`~ptc_plus.workflow.errors.WorkflowError` and nothing ran.
What it returns, a :class:`WorkflowRun`, is already running; from then on
a failure is the run's :class:`StopReason`, never an exception.

A run is one program of the code runtime (the guest of :mod:`.guest`)
under ``read-only`` with no network, whose only calls are answered by its
:class:`~.lane.ChildLane`. However the program ends — value, exception,
fatal error, deadline, cancellation — the run then reaps every child not
settled and only then settles (:meth:`WorkflowRun.report`). Effects the
children had outside (files written, messages sent) stay: nothing is rolled
back, and the report says so.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import itertools
from collections.abc import Sequence
from pathlib import Path

import attrs

from hookspecs import AgentRef, HostServices, JSONObject, JSONValue
from hookspecs.children import ChildAgents
from ptc_plus.i18n import message
from ptc_plus.runtime import CodeRuntime, OutcomeKind, RunLimits, RunOutcome, SandboxPolicy
from ptc_plus.workflow import errors
from ptc_plus.workflow.caps import WorkflowCaps
from ptc_plus.workflow.check import check_script
from ptc_plus.workflow.guest import GUEST_TOOLS, guest_program
from ptc_plus.workflow.lane import ChildLane
from ptc_plus.workflow.progress import Listener, Progress, ProgressEvent

GRACE_S = 3.0
"""How long cancelled children get to be reaped (twice: cancel, then cancel again)."""


class StopReason(enum.StrEnum):
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"
    CAP_TRIPPED = "cap-tripped"
    TIMED_OUT = "timed-out"

    @property
    def code(self) -> str:
        """The error code a run that did not complete is reported with."""
        return _STOP_CODES[self]


_STOP_CODES = {
    StopReason.COMPLETED: "",
    StopReason.FAILED: "PTC-8021",
    StopReason.CANCELLED: "PTC-8022",
    StopReason.CAP_TRIPPED: "PTC-8023",
    StopReason.TIMED_OUT: "PTC-8024",
}


@attrs.frozen(kw_only=True)
class WorkflowReport:
    """How a run settled. ``value`` only when ``stop_reason`` is ``completed``."""

    run_id: str
    stop_reason: StopReason
    value: JSONValue = None
    detail: str = ""
    """Why it did not complete (the fatal error's or the program's message)."""
    fatal_code: str = ""
    phase: str = ""
    agents: JSONObject = attrs.field(factory=dict)
    logs: str = ""
    notes: tuple[str, ...] = ()

    def to_json(self) -> JSONObject:
        return {
            "run_id": self.run_id,
            "stop_reason": str(self.stop_reason),
            "value": self.value,
            "detail": self.detail,
            "fatal_code": self.fatal_code,
            "phase": self.phase,
            "agents": self.agents,
            "logs": self.logs,
            "notes": list(self.notes),
        }

    def text(self, lang: str | None = None) -> str:
        """The report as the model (or a person) reads a run that did not complete."""
        head = message(
            f"error.{self.stop_reason.code}",
            lang,
            run=self.run_id,
            detail=self.detail.rstrip(". \n") or "-",
            **_counts(self.agents),
        )
        parts = [f"{self.stop_reason} ({self.stop_reason.code}): {head}"]
        if self.logs:
            parts.append(message("ptc.workflow.report.log", lang) + "\n" + self.logs.rstrip("\n"))
        parts.extend(message("runtime.report.note", lang, note=note) for note in self.notes)
        return "\n".join(parts)


def _counts(agents: JSONObject) -> dict[str, JSONValue]:
    return {key: agents.get(key, 0) for key in ("started", "succeeded", "failed", "reaped")}


class WorkflowRun:
    """A started run: its progress while it runs, its report once settled. Owned by its engine."""

    def __init__(self, run_id: str, agent: AgentRef, progress: Progress, lane: ChildLane) -> None:
        self.run_id = run_id
        self.agent = agent
        self.progress = progress
        self.lane = lane
        self.abort = asyncio.Event()
        self.fatal: tuple[str, dict[str, str]] | None = None
        self.task: asyncio.Task[WorkflowReport] | None = None
        self.settled: WorkflowReport | None = None

    def on_fatal(self, code: str, params: dict[str, str]) -> None:
        if self.fatal is None:
            self.fatal = (code, params)
        self.abort.set()

    def cancel(self) -> None:
        """Stop the run (Ctrl-C, the host's cancellation): the script stops and every child is reaped."""
        self.abort.set()

    @property
    def done(self) -> bool:
        return self.settled is not None

    async def report(self) -> WorkflowReport:
        """Wait for the settled report. Cancelling the wait cancels the run and still waits until it settled."""
        assert self.task is not None
        try:
            return await asyncio.shield(self.task)
        except asyncio.CancelledError:
            self.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.task
            raise


class WorkflowEngine:
    """Starts runs for one host; :meth:`aclose` cancels and awaits every live one and refuses new ones."""

    def __init__(self, services: HostServices, children: ChildAgents) -> None:
        self._services = services
        self._children = children
        self._runtimes: dict[float, CodeRuntime] = {}
        self._numbers = itertools.count(1)
        self.runs: dict[str, list[WorkflowRun]] = {}
        """Session id → its runs, oldest first (``/workflow``)."""
        self.listeners: list[Listener] = []
        self._closed = False

    def start(
        self,
        script: object,
        args: object,
        *,
        agent: AgentRef,
        call_id: str,
        caps: WorkflowCaps,
        requested: dict[str, float | None] | None = None,
        workspace: Path | None = None,
        protected: Sequence[Path] = (),
    ) -> WorkflowRun:
        """Check and start a run; raises :class:`~.errors.WorkflowError` when it cannot start."""
        if self._closed:
            raise errors.WorkflowClosed()
        if not isinstance(script, str):
            raise errors.InvalidArguments(detail="script must be a string")
        for name, value in (requested or {}).items():
            ceiling = getattr(caps, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int | float) or value <= 0):
                raise errors.InvalidArguments(detail=f"{name} must be a positive number")
            if value is not None and value > ceiling:
                raise errors.CapsAboveCeiling(name=name, value=f"{value:g}", ceiling=f"{ceiling:g}")
        caps = caps.lowered(**(requested or {}))
        checked = check_script(script)
        known = frozenset(self._children.providers())
        for provider in sorted(checked.providers - known):
            raise errors.UnknownProvider(provider=provider, known=", ".join(sorted(known)) or "-")
        run_id = f"wf-{next(self._numbers)}@{agent.session_id}"
        progress = Progress(run_id, self._services, agent, self.listeners)
        holder: list[WorkflowRun] = []
        lane = ChildLane(
            children=self._children,
            parent=agent,
            run_id=run_id,
            caps=caps,
            progress=progress,
            on_fatal=lambda code, params: holder[0].on_fatal(code, params),
        )
        run = WorkflowRun(run_id, agent, progress, lane)
        holder.append(run)
        program = guest_program(script, args, in_flight=caps.max_concurrent_agents, max_items=caps.max_items_per_call)
        runtime = self.runtime_for(caps.timeout_s)
        where = workspace or self._services.workspace
        run.task = asyncio.get_running_loop().create_task(self._execute(run, runtime, program, where, protected))
        self.runs.setdefault(agent.session_id, []).append(run)
        progress.emit(ProgressEvent(run_id=run_id, kind="run-started", call_id=call_id))
        return run

    def runtime_for(self, timeout_s: float) -> CodeRuntime:
        """The code runtime of runs with this deadline: `read-only`, no network, no warm spare."""
        runtime = self._runtimes.get(timeout_s)
        if runtime is None:
            # read-only, no network, no warm spare: a script orchestrates, it writes nothing itself, and
            # nothing of a run may be left waiting after it (the confinement of run_code stays the boundary).
            limits = RunLimits(
                policy=SandboxPolicy.READ_ONLY,
                network=False,
                timeout_s=timeout_s,
                max_timeout_s=timeout_s,
                warm_spare=False,
            )
            runtime = self._runtimes[timeout_s] = CodeRuntime(limits)
        return runtime

    async def _execute(
        self, run: WorkflowRun, runtime: CodeRuntime, program: str, workspace: Path, protected: Sequence[Path]
    ) -> WorkflowReport:
        outcome: RunOutcome | None = None
        failure = ""
        try:
            outcome = await runtime.run(
                program,
                workspace=workspace,
                tool_names=GUEST_TOOLS,
                lane=run.lane,
                cancelled=run.abort,
                protected=protected,
            )
        except Exception as exc:  # the runtime refused to run at all (closed): the run failed, nothing started
            failure = f"{type(exc).__name__}: {exc}"
        finally:
            # Whatever ended the program, no child of the run outlives it (awaited by the script or not).
            abandoned = await asyncio.shield(run.lane.reap(GRACE_S))
        report = self._report(run, outcome, failure, abandoned)
        run.settled = report
        run.progress.emit(
            ProgressEvent(run_id=run.run_id, kind="run-ended", detail=str(report.stop_reason), phase=report.phase)
        )
        return report

    def _report(
        self, run: WorkflowRun, outcome: RunOutcome | None, failure: str, abandoned: tuple[str, ...]
    ) -> WorkflowReport:
        value: JSONValue = None
        fatal_code = ""
        if run.fatal is not None:
            fatal_code, params = run.fatal
            stop = StopReason.CAP_TRIPPED if fatal_code in errors.CAP_CODES else StopReason.FAILED
            detail = f"{fatal_code}: {message(f'error.{fatal_code}', **_fatal_params(fatal_code, params))}"
        elif outcome is None:
            stop, detail = StopReason.FAILED, failure
        elif outcome.failure is None:
            stop, detail, value = StopReason.COMPLETED, "", outcome.value
        elif outcome.failure.kind is OutcomeKind.TIMEOUT:
            stop, detail = StopReason.TIMED_OUT, outcome.failure.message()
        elif outcome.failure.kind is OutcomeKind.ABORT:
            stop, detail = StopReason.CANCELLED, outcome.failure.message()
        else:
            stop = StopReason.FAILED
            detail = f"{outcome.failure.kind} ({outcome.failure.code}): {outcome.failure.message()}"
        progress = run.progress
        notes = [message("ptc.workflow.note.not-rolled-back")]
        if abandoned:
            notes.append(message("ptc.workflow.note.abandoned", ids=", ".join(abandoned)))
        if progress.recorder_failure:
            notes.append(message("ptc.workflow.note.recorder", detail=progress.recorder_failure))
        logs = "".join(entry.text for entry in outcome.logs) if outcome is not None else ""
        return WorkflowReport(
            run_id=run.run_id,
            stop_reason=stop,
            value=value,
            detail=detail,
            fatal_code=fatal_code,
            phase=progress.current,
            agents={**progress.counters(), "abandoned": len(abandoned)},
            logs=logs,
            notes=tuple(notes),
        )

    def live(self) -> list[WorkflowRun]:
        return [run for runs in self.runs.values() for run in runs if not run.done]

    async def aclose(self) -> None:
        """Refuse new runs, cancel live ones and wait until each settled; then close the runtimes."""
        self._closed = True
        live = self.live()
        for run in live:
            run.cancel()
        for run in live:
            if run.task is not None:
                with contextlib.suppress(asyncio.CancelledError):
                    await run.task
        for runtime in self._runtimes.values():
            await runtime.aclose()


_FATAL_PARAMS = {
    errors.FATAL_OPTION: ("option",),
    errors.FATAL_SCHEMA: ("detail",),
    errors.FATAL_PROVIDER: ("provider", "known"),
    errors.FATAL_AGENTS: ("limit",),
    errors.FATAL_ITEMS: ("count", "limit"),
    errors.FATAL_CALL: ("detail",),
    errors.FATAL_HOST: ("detail",),
}


def _fatal_params(code: str, params: dict[str, str]) -> dict[str, str]:
    """Exactly the parameters the code's message takes (the guest's are untrusted)."""
    return {name: params.get(name, "?") for name in _FATAL_PARAMS.get(code, ())}
