"""Running a cell in a session's kernel: recovery, the two-phase journal, notices (ADR 0081).

One cell, in order:

1. The journal is read. The session's live kernel is used if it holds the journal's head
   and its sandbox is this request's (same workspace, same protected paths: a kernel
   serves one workspace only); otherwise (first cell, worker exit, timeout, memory kill,
   abort, eviction, another process's cells, a restart, another workspace) the kernel is
   *recovered*: the cells up to the head's durable frontier are replayed in a fresh worker
   with every nested call answered from the journal (:class:`~.lanes.ReplayLane`: no tool
   is dispatched). The journal is evidence, never authority (ADR 0085): a replay runs in
   *this* request's workspace under its policy and protected paths, and a cell recorded
   in another directory or under another policy ends the frontier before anything runs.
   Recovery shares the cell's deadline: it may use :data:`RECOVERY_SHARE` of the timeout;
   a replay that runs out of it was only slow, not divergent, and recovery contracts to
   what it rebuilt. A replay that diverges walks the frontier back to that cell's parent
   and replays once more; a second divergence contracts to the empty kernel instead of
   walking the history again and again. When the frontier is short of the head, the
   contraction is journalled (a ``head`` record) so later cold starts begin from it
   without meeting the same damage.
2. Provenance: names whose declaring cell left the model-visible surface, and what
   depends on them, are dropped before the cell (:mod:`.names`).
3. A tentative ``entered`` entry is journalled, the cell runs (its nested calls recorded
   on the way), and a ``settled`` entry confirms it with what it settled to. A kept kernel
   is frozen and every other process of its sandbox killed before the cell counts as
   settled (:mod:`.quiesce`); one that still has threads of the cell is stopped instead.
   A cell that touched the OS, had a nested call that never settled, left threads
   running, made nested calls too large to journal, or did not finish is volatile; only
   durable cells are ever replayed.
4. Notices: ``PTC-R002`` when recovery skipped history, once per run of consecutive
   contractions; ``PTC-R003`` when provenance dropped names. After a successful cell
   they are logged (stream ``log``); after a failed one they follow the main error.

A journal that cannot be read or appended never blocks the cell: it runs on an empty
kernel (or its live one) and the outcome says why in a note.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs

from hookspecs import JSONValue
from ptc_plus.i18n import message
from ptc_plus.runtime.kernel.desk import Reason, StateDesk, reason_text
from ptc_plus.runtime.kernel.errors import JournalTooLarge
from ptc_plus.runtime.kernel.journal import (
    BindingsRecord,
    Cell,
    Deleted,
    Entered,
    HeadMoved,
    Journal,
    Record,
    RecordedCall,
    Settled,
    encode,
)
from ptc_plus.runtime.kernel.lanes import RecordingLane, ReplayLane
from ptc_plus.runtime.kernel.names import CellNames, PathCell, cell_names, tainted
from ptc_plus.runtime.kernel.pool import Kernel, KernelPool
from ptc_plus.runtime.kernel.quiesce import freeze, thaw
from ptc_plus.runtime.kernel.store import JournalStore, Unreadable
from ptc_plus.runtime.lane import Lane
from ptc_plus.runtime.launcher import Launcher
from ptc_plus.runtime.outcome import LogEntry, OutcomeKind, RunFailure, RunOutcome
from ptc_plus.runtime.process import WorkerProcess
from ptc_plus.runtime.run import KernelBoot, ProgramRun, ReplHandler, RunRequest, interpreter_pid
from ptc_plus.runtime.run_limits import ResolvedTimeout

_LOG = logging.getLogger(__name__)

RECOVERY_SHARE = 0.5
"""The part of a cell's timeout a cold start may spend replaying history; the rest is the cell's (ADR 0085)."""
MAX_WALKS = 2
"""Replay passes over the history per recovery: the first, and one walk back after a divergence."""


@attrs.frozen(kw_only=True)
class KernelCell:
    """What the caller hands the runtime to run a program as the next cell of a session's kernel."""

    session: str
    """The kernel's key (a session id, or the journal directory of ``ptc-plus exec --session``)."""
    store: JournalStore = attrs.field(eq=False)
    call_id: str = ""
    """The ``run_code`` call's id: provenance asks whether it is still on the model-visible surface."""
    bindings: tuple[tuple[str, str], ...] = ()
    """User bindings: ``(module name, source)`` loaded into every cell, in order."""
    bindings_fingerprint: str = ""
    turned_off: tuple[tuple[str, int], ...] = ()
    """Tools a capability refresh turned off, with the refresh's number (:attr:`KernelBoot.turned_off`)."""


@attrs.frozen(kw_only=True)
class Recovery:
    """What the kernel did before the cell ran (``ptc-plus exec --json`` shows it)."""

    cold: bool = False
    """The kernel was rebuilt from the journal (no live one held its head)."""
    replayed: int = 0
    """Cell runs replayed (attempts that diverged included)."""
    kept: int = 0
    """Cells whose state the kernel holds after recovery."""
    skipped: int = 0
    """Cells of the head's history recovery could not rebuild (0: no contraction)."""
    reason: str | None = None
    notice: str | None = None
    """``PTC-R002`` text when the model is told of this contraction."""
    dropped: tuple[str, ...] = ()
    """Names provenance dropped before the cell."""

    def to_json(self) -> dict[str, Any]:
        return {
            "cold_start": self.cold,
            "replayed": self.replayed,
            "kept_cells": self.kept,
            "skipped_cells": self.skipped,
            "reason": self.reason,
            "notice": self.notice,
            "dropped": list(self.dropped),
        }


class KernelRuntime:
    """The kernels of one :class:`~ptc_plus.runtime.CodeRuntime` (``[runtime] kernel = "session"``)."""

    def __init__(self, launcher: Launcher) -> None:
        limits = launcher.limits
        self._launcher = launcher
        self._durable = limits.durable_replay
        self.pool = KernelPool(limits.max_kernels, limits.kernel_idle_s, limits.grace_s)

    async def run_cell(
        self, request: RunRequest, lane: Lane | None, abort: asyncio.Event, cell: KernelCell
    ) -> tuple[RunOutcome, Recovery]:
        async with self.pool.session_lock(cell.session):
            return await _CellRun(self, request, lane, abort, cell).run()

    async def aclose(self) -> None:
        await self.pool.aclose()

    def kill_now(self) -> None:
        self.pool.kill_now()


class _CellRun:
    def __init__(
        self, owner: KernelRuntime, request: RunRequest, lane: Lane | None, abort: asyncio.Event, cell: KernelCell
    ) -> None:
        self._owner = owner
        self._launcher = owner._launcher
        self._request = request
        self._lane = lane
        self._abort = abort
        self._cell = cell
        self._notes: list[str] = []
        self._journal_ok = True
        self._items: list[object] = []
        """The journal as read, then with every record this cell appended."""

    # -- journal access: never blocks the cell ------------------------------------------------
    def _read(self, kept: Kernel | None) -> None:
        """The journal's items: those ``kept`` holds while the store is unchanged since, else read again."""
        store = self._cell.store
        if kept is not None and kept.marker is not None and kept.marker == store.marker():
            self._items = list(kept.records)
            return
        try:
            self._items = list(store.read())
        except JournalTooLarge as error:
            # Damage, set aside unread: recovery starts empty and journals the contraction in a fresh journal.
            _LOG.warning("REPL journal too large: %s", error)
            self._notes.append(message("runtime.repl.journal_too_large", detail=error.message()))
            self._items = [Unreadable(error.message())]
        except Exception as error:  # an unreadable store: work on without history, and say so
            _LOG.warning("REPL journal unreadable: %s", error)
            self._journal_ok = False
            self._notes.append(message("runtime.repl.journal_unusable", detail=str(error)))
            self._items = []

    def _journal(self) -> Journal:
        journal = Journal.load(self._items)
        if journal.invalid:
            _LOG.warning("REPL journal: %d unusable entries: %s", len(journal.invalid), "; ".join(journal.invalid[:5]))
        return journal

    def _append(self, record: Record) -> None:
        if not self._journal_ok:
            return
        try:
            self._cell.store.append(encode(record))
            self._items.append(record)
        except Exception as error:
            _LOG.warning("REPL journal not written: %s", error)
            self._journal_ok = False
            self._notes.append(message("runtime.repl.journal_unusable", detail=str(error)))

    # -- the cell -------------------------------------------------------------------------------
    async def run(self) -> tuple[RunOutcome, Recovery]:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self._request.timeout.seconds
        pool = self._owner.pool
        kernel = pool.take(self._cell.session)
        self._read(kernel)
        journal = self._journal()
        serves = kernel is not None and kernel.serves(self._request.workspace, self._request.protected)
        if kernel is not None and (kernel.head != journal.head or not serves):
            # Another process moved the session on, a restore, or another workspace's sandbox: rebuild.
            await pool.stop(kernel.worker)
            kernel = None
        recovery = Recovery()
        if kernel is None:
            try:
                kernel, recovery = await self._recover(journal)
            except _Aborted:
                return RunOutcome(failure=RunFailure(kind=OutcomeKind.ABORT)), Recovery(cold=True)
            journal = self._journal() if recovery.skipped else journal
        parent = kernel.head if kernel is not None else 0
        dropped, newly = self._provenance(journal, parent)
        recovery = attrs.evolve(recovery, dropped=tuple(sorted(newly)))
        seq = journal.next_seq
        fingerprint = self._cell.bindings_fingerprint
        if fingerprint and journal.bindings_source(fingerprint) is None:
            self._append(BindingsRecord(fingerprint=fingerprint, modules=self._cell.bindings))
        request = self._request
        self._append(
            Entered(
                seq=seq,
                parent=parent,
                call_id=self._cell.call_id,
                source=request.code,
                cwd=str(request.workspace),
                policy=str(self._launcher.limits.policy),
                network=self._launcher.limits.network,
                bindings=fingerprint,
                tools=tuple(request.tool_names),
                drop=tuple(sorted(dropped)),
                at=time.time(),
            )
        )
        loaded = kernel.bindings if kernel is not None else ""
        boot = KernelBoot(
            first_id=kernel.next_id if kernel is not None else 1,
            drop=tuple(sorted(dropped)),
            bindings=self._cell.bindings if fingerprint != loaded else None,
            turned_off=self._cell.turned_off,
        )
        recording = RecordingLane(self._lane) if self._lane is not None else None
        desk = StateDesk(journal, parent, lambda name: self._append(Deleted(name=name)), durable=self._owner._durable)
        timeout = request.timeout.seconds
        if recovery.replayed:
            # The replay spent part of the cell's deadline: the cell has what is left of it.
            left = max(deadline - loop.time(), 0.001)
            request = attrs.evolve(request, timeout=attrs.evolve(request.timeout, seconds=left))
        if kernel is not None:
            thaw(kernel.interpreter)
        run = ProgramRun(
            attrs.evolve(request, kernel=boot),
            self._launcher,
            recording,
            self._abort,
            worker=kernel.worker if kernel is not None else None,
            repl=_with_overflow(desk, recording),
        )
        before = self._cell.store.marker()
        outcome = await run.execute()
        if recovery.replayed and outcome.failure is not None and outcome.failure.kind is OutcomeKind.TIMEOUT:
            spent = f"{timeout - request.timeout.seconds:.1f}"
            self._notes.append(message("runtime.repl.recovery_took", spent=spent, timeout=f"{timeout:g}"))
        # Another writer while the cell ran (a compaction's ``hidden``, or the cell's own ``deleted``): the
        # records held here may miss it, so the kernel keeps none and its next cell reads the store.
        unchanged = self._cell.store.marker() == before
        calls = recording.calls() if recording is not None else ()
        volatile = self._volatile(outcome, calls, confirmed=run.kept_worker is not None)
        if volatile is None and recording is not None and recording.overflow is not None:
            volatile = ("too-large", recording.overflow)
        kept = run.kept_worker
        interpreter = None
        if kept is not None:
            # Before the cell counts as settled: nothing of it runs until the next cell.
            interpreter = interpreter_pid(kept.pid, self._launcher.limits.python)
            left_running = await freeze(kept, interpreter, self._launcher.limits.grace_s)
            if left_running is not None:
                await pool.stop(kept)
                kept = None
                volatile = volatile or left_running
        durable = volatile is None and journal_durable(journal, parent)
        names = cell_names(request.code)
        self._append(
            Settled(
                seq=seq,
                outcome=_outcome_name(outcome),
                volatile=volatile,
                calls=calls,
                bound=tuple(sorted(names.bound)),
                referenced=tuple(sorted(names.loaded)),
                saves=tuple(desk.saves) if durable and outcome.failure is None else (),
                restore=desk.restore,
            )
        )
        if desk.restore is not None:
            self._append(HeadMoved(target=desk.restore, cause="restore", reason=None, noticed=False))
            if kept is not None:
                await pool.stop(kept)
            kept = None
        if kept is not None and self._journal_ok:
            held = Kernel(
                worker=kept,
                head=seq,
                next_id=run.next_id,
                bindings=fingerprint,
                records=tuple(self._items) if unchanged else (),
                marker=self._cell.store.marker() if unchanged else None,
                workspace=request.workspace,
                protected=request.protected,
                interpreter=interpreter,
            )
            pool.put(self._cell.session, held)
        elif kept is not None:
            # Without a journal the live state cannot be matched to a head: do not keep it.
            await pool.stop(kept)
        notices = [n for n in (recovery.notice, self._dropped_notice(newly)) if n]
        return self._with_notices(outcome, notices), recovery

    def _volatile(self, outcome: RunOutcome, calls: tuple[RecordedCall, ...], *, confirmed: bool) -> Reason | None:
        """Why the cell cannot be replayed (``None``: it is durable). ``confirmed``: the worker said ``done``
        and lives on, so the cell ran to its end (its value may still have been refused: ``invalid-output``)."""
        if not self._owner._durable:
            return ("replay-off", "")
        if outcome.volatile is not None:
            return outcome.volatile
        if outcome.failure is not None and not confirmed:
            return ("unconfirmed", str(outcome.failure.kind))
        for call in calls:
            if call.status == "discarded":
                return ("discarded", call.tool)
        return None

    # -- provenance ------------------------------------------------------------------------------
    def _provenance(self, journal: Journal, head: int) -> tuple[frozenset[str], frozenset[str]]:
        """Names to drop before the cell, and those among them the previous cell did not drop already."""
        path = journal.path(head) if head else ()
        if not any(cell.hidden for cell in path):
            return frozenset(), frozenset()
        cells = [PathCell(hidden=cell.hidden, names=_names(cell)) for cell in path]
        ever_bound = frozenset().union(*(cell.names.bound for cell in cells))
        dropped = tainted(cells) & ever_bound
        before = frozenset(path[-1].entered.drop)
        return dropped, dropped - before

    def _dropped_notice(self, newly: frozenset[str]) -> str | None:
        if not newly:
            return None
        return _notice("PTC-R003", names=", ".join(sorted(newly)))

    # -- recovery ----------------------------------------------------------------------------------
    async def _recover(self, journal: Journal) -> tuple[Kernel | None, Recovery]:
        head = journal.head
        if head == 0 and not journal.unacknowledged:
            return None, Recovery(cold=True)
        why: str | None
        if journal.unacknowledged:
            # Nothing after unknown damage is provable (a lost line may have been any record): start empty.
            frontier, why = 0, reason_text(("corrupt", journal.unacknowledged[0]))
            _LOG.warning("REPL journal damaged: %s", "; ".join(journal.unacknowledged[:5]))
        elif self._owner._durable:
            frontier = journal.frontier(head)
            reason = journal.first_volatile(head)
            why = reason_text(reason) if reason is not None else None
        else:
            frontier, why = 0, reason_text(("replay-off", ""))
        frontier, why = self._replayable_frontier(journal, frontier, why)
        loop = asyncio.get_running_loop()
        budget = self._request.timeout.seconds * RECOVERY_SHARE
        until = loop.time() + budget
        replayed = walks = 0
        while True:
            kernel, runs, stop = await self._replay(journal, frontier, until, budget)
            replayed += runs
            if self._abort.is_set():
                # Aborted while rebuilding: nothing is learnt about the history, so nothing is journalled.
                if kernel is not None:
                    await self._owner.pool.stop(kernel.worker)
                raise _Aborted()
            if stop is None:
                break
            frontier, why, slow = stop
            walks += 1
            if slow:
                break  # only slow: the kernel holds what was rebuilt in time (``frontier``)
            if walks >= MAX_WALKS:
                # The history replays differently each time: walking it again proves nothing more.
                frontier = 0
                break
        total = len(journal.path(head)) if head else 0
        kept = len(journal.path(frontier)) if frontier else 0
        if frontier == head and not journal.unacknowledged:
            return kernel, Recovery(cold=True, replayed=replayed, kept=kept)
        skipped = max(total - kept, 1 if journal.unacknowledged else 0)
        why = why or reason_text(("corrupt", ""))
        notice = None
        if not journal.in_contraction_cycle:
            notice = _notice("PTC-R002", kept=kept, skipped=skipped, reason=why)
        self._append(
            HeadMoved(target=frontier, cause="contraction", reason=("contraction", why), noticed=notice is not None)
        )
        recovery = Recovery(cold=True, replayed=replayed, kept=kept, skipped=skipped, reason=why, notice=notice)
        return kernel, recovery

    def _replayable_frontier(self, journal: Journal, frontier: int, why: str | None) -> tuple[int, str | None]:
        """``frontier`` cut before the first cell on its path that cannot be replayed here whatever it does
        (another workspace, policy or network setting): found before anything runs."""
        limits = self._launcher.limits
        for cell in journal.path(frontier) if frontier else ():
            problem = _unreplayable(cell.entered, self._request.workspace, limits.policy, limits.network)
            if problem is not None:
                return cell.entered.parent, reason_text(("diverged", problem))
        return frontier, why

    async def _replay(
        self, journal: Journal, frontier: int, until: float, budget: float
    ) -> tuple[Kernel | None, int, tuple[int, str, bool] | None]:
        """Rebuild the state of ``frontier`` in a fresh worker by the loop time ``until``: the kernel, the runs
        made, and when it stopped short ``(the node it holds or to walk back to, why, only slow)``."""
        kernel: Kernel | None = None
        runs = 0
        slowest = 0.0
        loop = asyncio.get_running_loop()
        path = journal.path(frontier) if frontier else ()
        for cell in path:
            entered, settled = cell.entered, cell.settled
            assert settled is not None  # on the frontier's path every cell is settled
            left = until - loop.time()
            if left <= 0 or (kernel is not None and slowest >= left):
                # A cell as slow as the slowest so far would not finish: keep what was rebuilt.
                held = kernel.head if kernel is not None else 0
                return kernel, runs, (held, self._late(journal, held, len(path), budget), True)
            problem: str | None = None
            bindings: tuple[tuple[str, str], ...] | None = None
            loaded = kernel.bindings if kernel is not None else ""
            if entered.bindings != loaded:
                bindings = journal.bindings_source(entered.bindings) if entered.bindings else ()
                if bindings is None:
                    problem = "the user bindings it ran with are not in the journal"
            if problem is None:
                lane = ReplayLane(settled.calls)
                # The journal is evidence, never authority: this request's workspace, protected paths and
                # policy (the launcher's), whatever the entry says (ADR 0085).
                request = RunRequest(
                    code=entered.source,
                    workspace=self._request.workspace,
                    tool_names=tuple(entered.tools),
                    timeout=ResolvedTimeout(seconds=left),
                    protected=self._request.protected,
                    discovery=self._request.discovery,
                    kernel=KernelBoot(
                        first_id=kernel.next_id if kernel is not None else 1,
                        drop=tuple(entered.drop),
                        bindings=bindings,
                    ),
                )
                desk = StateDesk(journal, entered.parent, lambda name: None, replaying=True)
                if kernel is not None:
                    thaw(kernel.interpreter)
                started = loop.time()
                run = ProgramRun(
                    request,
                    self._launcher,
                    lane,
                    self._abort,
                    worker=kernel.worker if kernel is not None else None,
                    repl=desk.answer,
                )
                outcome = await run.execute()
                runs += 1
                slowest = max(slowest, loop.time() - started)
                if outcome.failure is not None and outcome.failure.kind is OutcomeKind.TIMEOUT:
                    # Journalled cells that timed out are never on a frontier: this one only ran out of the
                    # recovery's time, and the worker went with what it held.
                    return None, runs, (0, self._late(journal, 0, len(path), budget), True)
                problem = lane.finish()
                if problem is None and _outcome_name(outcome) != settled.outcome:
                    problem = f"it ended {_outcome_name(outcome)}, journalled {settled.outcome}"
                if problem is None and outcome.volatile is not None:
                    problem = reason_text(outcome.volatile)
                if problem is None and run.kept_worker is None:
                    problem = "its worker did not survive the replay"
                if problem is None and run.kept_worker is not None:
                    problem = await self._hold(run.kept_worker)
                    if problem is None:
                        kernel = Kernel(
                            worker=run.kept_worker,
                            head=entered.seq,
                            next_id=run.next_id,
                            bindings=entered.bindings,
                            workspace=self._request.workspace,
                            protected=self._request.protected,
                            interpreter=interpreter_pid(run.kept_worker.pid, self._launcher.limits.python),
                        )
                        continue
                if run.kept_worker is not None:
                    await self._owner.pool.stop(run.kept_worker)
            if kernel is not None:
                await self._owner.pool.stop(kernel.worker)
            return None, runs, (entered.parent, reason_text(("diverged", problem or "")), False)
        return kernel, runs, None

    async def _hold(self, worker: WorkerProcess) -> str | None:
        """Freeze a replayed cell's kernel as after any cell; why it cannot be kept (its threads), or ``None``."""
        interpreter = interpreter_pid(worker.pid, self._launcher.limits.python)
        left_running = await freeze(worker, interpreter, self._launcher.limits.grace_s)
        return None if left_running is None else reason_text(left_running)

    @staticmethod
    def _late(journal: Journal, held: int, total: int, budget: float) -> str:
        kept = len(journal.path(held)) if held else 0
        detail = f"{kept} of {total} cell(s) rebuilt within {budget:g} s, its share of the cell's timeout"
        return reason_text(("deadline", detail))

    def _with_notices(self, outcome: RunOutcome, notices: Sequence[str]) -> RunOutcome:
        notes = (*self._notes, *outcome.notes)
        if not notices:
            return attrs.evolve(outcome, notes=notes)
        if outcome.failure is None:
            logs = (*outcome.logs, *(LogEntry(stream="log", text=notice + "\n") for notice in notices))
            return attrs.evolve(outcome, logs=logs, notes=notes)
        return attrs.evolve(outcome, notices=tuple(notices), notes=notes)


def _notice(code: str, **params: object) -> str:
    """A notice as the model reads it: its stable code first, then the message."""
    return f"{code}: {message(f'error.{code}', None, **params)}"


class _Aborted(Exception):
    """The cell was aborted while its kernel was being rebuilt."""


def _names(cell: Cell) -> CellNames:
    """What ``cell`` bound and read: as journalled when it settled, else read from its source."""
    settled = cell.settled
    if settled is None:
        return cell_names(cell.entered.source)
    return CellNames(bound=frozenset(settled.bound), loaded=frozenset(settled.referenced))


def _with_overflow(desk: StateDesk, recording: RecordingLane | None) -> ReplHandler:
    """``desk``'s answers, with the cell volatile from the moment its nested calls passed the journal's bound."""

    def answer(op: str, name: str | None, volatile: Reason | None) -> tuple[bool, JSONValue]:
        if volatile is None and recording is not None and recording.overflow is not None:
            volatile = ("too-large", recording.overflow)
        return desk.answer(op, name, volatile)

    return answer


def journal_durable(journal: Journal, parent: int) -> bool:
    """Whether the state the cell started from can be rebuilt (so a save in it can be kept)."""
    return parent == 0 or journal.frontier(parent) == parent


def _outcome_name(outcome: RunOutcome) -> str:
    return "ok" if outcome.failure is None else str(outcome.failure.kind)


def _unreplayable(entered: Entered, workspace: Path, policy: object, network: bool) -> str | None:
    """Why a journalled cell cannot be replayed in this request: what it recorded is evidence to compare with
    the request's workspace and the runtime's policy, never a setting to run with (ADR 0085)."""
    if entered.policy != str(policy) or entered.network != network:
        return f"it ran under policy {entered.policy}, the runtime now has {policy}"
    if entered.cwd != str(workspace):
        return f"it ran in {entered.cwd}, not in this request's workspace"
    return None
