"""Running a cell in a session's kernel: recovery, the two-phase journal, notices (SPEC §8, ADR 0081).

One cell, in order:

1. The journal is read. The session's live kernel is used if it holds the journal's head;
   otherwise (first cell, worker exit, timeout, memory kill, abort, eviction, another
   process's cells, a restart) the kernel is *recovered*: the cells up to the head's
   durable frontier are replayed in a fresh worker with every nested call answered from
   the journal (:class:`~.lanes.ReplayLane`: no tool is dispatched). A replay that
   diverges walks the frontier back to that cell's parent and starts over. When the
   frontier is short of the head, the contraction is journalled (a ``head`` record) so
   later cold starts begin from it without meeting the same damage.
2. Provenance: names whose declaring cell left the model-visible surface, and what
   depends on them, are dropped before the cell (:mod:`.names`).
3. A tentative ``entered`` entry is journalled, the cell runs (its nested calls recorded
   on the way), and a ``settled`` entry confirms it with what it settled to. A cell that
   touched the OS, had a nested call that never settled, or did not finish is volatile;
   only durable cells are ever replayed.
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

from ptc_plus.i18n import message
from ptc_plus.runtime.kernel.desk import Reason, StateDesk, reason_text
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
from ptc_plus.runtime.kernel.store import JournalStore
from ptc_plus.runtime.lane import Lane
from ptc_plus.runtime.launcher import Launcher
from ptc_plus.runtime.outcome import LogEntry, OutcomeKind, RunFailure, RunOutcome
from ptc_plus.runtime.run import KernelBoot, ProgramRun, RunRequest

_LOG = logging.getLogger(__name__)


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
        pool = self._owner.pool
        kernel = pool.take(self._cell.session)
        self._read(kernel)
        journal = self._journal()
        if kernel is not None and kernel.head != journal.head:
            await pool.stop(kernel.worker)  # another process moved the session on, or a restore: rebuild
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
        desk = StateDesk(journal, parent, lambda name: self._append(Deleted(name=name)))
        run = ProgramRun(
            attrs.evolve(request, kernel=boot),
            self._launcher,
            recording,
            self._abort,
            worker=kernel.worker if kernel is not None else None,
            repl=desk.answer,
        )
        before = self._cell.store.marker()
        outcome = await run.execute()
        # Another writer while the cell ran (a compaction's ``hidden``, or the cell's own ``deleted``): the
        # records held here may miss it, so the kernel keeps none and its next cell reads the store.
        unchanged = self._cell.store.marker() == before
        calls = recording.calls() if recording is not None else ()
        volatile = self._volatile(outcome, calls, confirmed=run.kept_worker is not None)
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
        kept = run.kept_worker
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
        replayed = 0
        while True:
            kernel, runs, diverged = await self._replay(journal, frontier)
            replayed += runs
            if self._abort.is_set():
                # Aborted while rebuilding: nothing is learnt about the history, so nothing is journalled.
                if kernel is not None:
                    await self._owner.pool.stop(kernel.worker)
                raise _Aborted()
            if diverged is None:
                break
            frontier, why = diverged
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

    async def _replay(self, journal: Journal, frontier: int) -> tuple[Kernel | None, int, tuple[int, str] | None]:
        """Rebuild the state of ``frontier`` in a fresh worker: the kernel, the runs made, and on divergence
        ``(the node to walk back to, why)``."""
        kernel: Kernel | None = None
        runs = 0
        limits = self._launcher.limits
        for cell in journal.path(frontier) if frontier else ():
            entered, settled = cell.entered, cell.settled
            assert settled is not None  # on the frontier's path every cell is settled
            problem = _unreplayable(entered, limits.policy, limits.network)
            bindings: tuple[tuple[str, str], ...] | None = None
            loaded = kernel.bindings if kernel is not None else ""
            if problem is None and entered.bindings != loaded:
                bindings = journal.bindings_source(entered.bindings) if entered.bindings else ()
                if bindings is None:
                    problem = "the user bindings it ran with are not in the journal"
            if problem is None:
                lane = ReplayLane(settled.calls)
                request = RunRequest(
                    code=entered.source,
                    workspace=Path(entered.cwd),
                    tool_names=tuple(entered.tools),
                    timeout=self._request.timeout,
                    protected=self._request.protected,
                    discovery=self._request.discovery,
                    kernel=KernelBoot(
                        first_id=kernel.next_id if kernel is not None else 1,
                        drop=tuple(entered.drop),
                        bindings=bindings,
                    ),
                )
                desk = StateDesk(journal, entered.parent, lambda name: None, replaying=True)
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
                problem = lane.finish()
                if problem is None and _outcome_name(outcome) != settled.outcome:
                    problem = f"it ended {_outcome_name(outcome)}, journalled {settled.outcome}"
                if problem is None and outcome.volatile is not None:
                    problem = reason_text(outcome.volatile)
                if problem is None and run.kept_worker is None:
                    problem = "its worker did not survive the replay"
                if problem is None and run.kept_worker is not None:
                    kernel = Kernel(
                        worker=run.kept_worker, head=entered.seq, next_id=run.next_id, bindings=entered.bindings
                    )
                    continue
                if run.kept_worker is not None:
                    await self._owner.pool.stop(run.kept_worker)
            if kernel is not None:
                await self._owner.pool.stop(kernel.worker)
            return None, runs, (entered.parent, reason_text(("diverged", problem or "")))
        return kernel, runs, None

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


def journal_durable(journal: Journal, parent: int) -> bool:
    """Whether the state the cell started from can be rebuilt (so a save in it can be kept)."""
    return parent == 0 or journal.frontier(parent) == parent


def _outcome_name(outcome: RunOutcome) -> str:
    return "ok" if outcome.failure is None else str(outcome.failure.kind)


def _unreplayable(entered: Entered, policy: object, network: bool) -> str | None:
    """Why a journalled cell cannot be replayed here: replay uses what was recorded, never today's config."""
    if entered.policy != str(policy) or entered.network != network:
        return f"it ran under policy {entered.policy}, the runtime now has {policy}"
    if not Path(entered.cwd).is_dir():
        return f"its working directory {entered.cwd} is gone"
    return None
