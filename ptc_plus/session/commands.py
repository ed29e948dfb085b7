"""``/capabilities`` and ``/capabilities refresh`` for one controller (ADR 0068).

The commands read and replace the sessions' states in the controller's
:class:`~.table.SessionTable` and hold a refreshed state through the
:class:`~.opener.Opener`, as start and resume do (ADR 0112); the transition
itself (prepare, validate) lives in :mod:`.refresh`, the receipts in :mod:`.report`.
A refresh that waits for a session's running cells applies at the next safe
boundary: the last cell ending (:meth:`CapabilitiesCommands.released`) or the
next model step (:meth:`CapabilitiesCommands.at_boundary`).
"""

from __future__ import annotations

import attrs

from hookspecs import (
    AgentRef,
    CommandReceipt,
    CommandRequest,
    HostServices,
    ReceiptStatus,
    ToolCall,
)
from ptc_plus.config import Presentation
from ptc_plus.errors import PtcError
from ptc_plus.i18n import message
from ptc_plus.session.errors import CommandArguments, RefreshFailed, RefreshNotPersisted
from ptc_plus.session.opener import Opener
from ptc_plus.session.opening import host_view
from ptc_plus.session.presentation import InForce
from ptc_plus.session.refresh import Candidate, diff_summary, prepare, validate
from ptc_plus.session.report import COMMAND, REFRESH, SessionView, capabilities_receipt, refresh_receipt
from ptc_plus.session.state import SessionState
from ptc_plus.session.table import SessionTable


class CapabilitiesCommands:
    """The ``/capabilities`` command of one controller, and the refresh transition it applies."""

    def __init__(self, services: HostServices, table: SessionTable, opener: Opener) -> None:
        self._services = services
        self._table = table
        self._opener = opener

    def at_boundary(self, agent: AgentRef) -> None:
        """A model step is a safe boundary: a refresh still pending applies now when no cell of the session runs."""
        state = self._table.get(agent)
        if state is not None and state.pending is not None and not self._table.running(agent.session_id):
            self.apply_pending(state)

    def released(self, call: ToolCall) -> None:
        """``call``'s ``tool-execute`` seam returned or raised: the session's last cell ending lets a pending
        refresh apply."""
        state = self._table.get(call.caller) if self._table.cell_ended(call) else None
        if state is not None and state.pending is not None:
            self.apply_pending(state)

    def command(self, request: CommandRequest) -> CommandReceipt | None:
        """``/capabilities`` (the plan, read-only), ``/capabilities refresh [--dry-run]``; other arguments fail."""
        if request.name != COMMAND:
            return None
        args = request.args
        if args and args[0] == REFRESH and set(args[1:]) <= {"--dry-run"} and len(args) <= 2:
            return self.refresh(request.agent, dry_run=len(args) == 2)
        if args:
            error = CommandArguments(args=" ".join(args))
            return CommandReceipt(status=ReceiptStatus.FAILED, text=error.message(), data={"error": error.to_json()})
        return self._show(request.agent)

    def _show(self, agent: AgentRef) -> CommandReceipt:
        state = self._table.get(agent)
        if state is None:
            view = SessionView(presented=InForce(presentation=Presentation.NATIVE))
            return capabilities_receipt(None, (), view)
        counter = self._opener.counter
        environment = state.environment
        direct: tuple[str, ...] = ()
        late: tuple[str, ...] = ()
        if state.ptc and state.membership is not None:
            # Natively the host's own provision applies: nothing is direct or withheld.
            tools = host_view(self._services, agent)
            direct = tuple(s.name for s in tools if s.name in state.membership.direct)
            late = tuple(state.membership.late(tools))
        view = SessionView(
            presented=state.presented,
            direct=direct,
            late=late,
            delivery=state.delivery,
            navigation=state.view.navigation if state.view is not None else None,
            unit=counter.unit,
            gate_warnings=state.gate_warnings,
            pending=self._pending_summary(state),
            refresh_failure=state.refresh_failure,
        )
        return capabilities_receipt(environment, state.diagnostics, view)

    def _pending_summary(self, state: SessionState) -> tuple[int, str, bool] | None:
        """``(sequence, summary, waiting)``: the refresh waiting for a cell, else what a refresh now would do."""
        if state.environment is None:
            return None
        if state.pending is not None:
            return state.pending.sequence, diff_summary(state.pending.diff), True
        try:
            candidate = self._prepare(state)
        except PtcError as error:
            return state.environment.sequence + 1, error.message(), False
        live = (state.presentation, candidate.presented.presentation)
        return candidate.sequence, diff_summary(candidate.diff, presentation=live), False

    def refresh(self, agent: AgentRef, *, dry_run: bool = False) -> CommandReceipt:
        """Re-plan ``agent``'s session from the facts of now, as one transition (ADR 0068).

        Prepare and validate the candidate without touching the live plan;
        then (unless ``dry_run``) apply it at once when no cell of the session
        runs, else hold it as pending until the last one ends (or the next
        step). Applying persists one environment record first; only then is
        the state swapped, so a failure at any stage leaves the old plan whole.
        A candidate that changes nothing is ``unchanged``: nothing persisted,
        no notice (repeats are idempotent). No model request is made.
        """
        state = self._table.get(agent)
        if state is None or state.environment is None:
            return refresh_receipt(ReceiptStatus.FAILED, message("ptc.refresh.no-environment"))
        try:
            candidate = validate(self._prepare(state), host_view(self._services, agent), self._opener.counter)
        except RefreshFailed as error:
            return refresh_receipt(ReceiptStatus.FAILED, message("ptc.refresh.failed", reason=error.message()), error)
        live = (state.presentation, candidate.presented.presentation)
        summary = diff_summary(candidate.diff, presentation=live)
        if dry_run:
            return refresh_receipt(ReceiptStatus.SHOWN, message("ptc.refresh.dry-run", summary=summary), candidate)
        if not candidate.changes(state.environment, state.presentation):
            if state.pending is not None:  # the config went back: the waiting refresh has nothing left to do
                self._table.put(attrs.evolve(state, pending=None))
            return refresh_receipt(ReceiptStatus.UNCHANGED, message("ptc.refresh.unchanged"), candidate)
        running = self._table.running(agent.session_id)
        if running:
            self._table.put(attrs.evolve(state, pending=candidate))
            text = message("ptc.refresh.pending", sequence=candidate.sequence, summary=summary, running=running)
            return refresh_receipt(ReceiptStatus.PENDING, text, candidate)
        try:
            self._apply(state, candidate)
        except RefreshFailed as error:
            return refresh_receipt(ReceiptStatus.FAILED, message("ptc.refresh.failed", reason=error.message()), error)
        told = state.ptc or candidate.presented.code_mode  # a native session that stays native sees nothing
        key = "ptc.refresh.applied" if told else "ptc.refresh.applied-quiet"
        text = message(key, sequence=candidate.sequence, summary=summary)
        children = self._table.children(agent.session_id)
        if children and candidate.diff.removed:
            text += "\n" + message("ptc.refresh.children", count=children)
        return refresh_receipt(ReceiptStatus.APPLIED, text, candidate)

    def _prepare(self, state: SessionState) -> Candidate:
        assert state.environment is not None
        today = self._opener.today(state.info)
        return prepare(
            state.environment, today, state.info, self._opener.counter, self._table.parent_members(state.info.agent)
        )

    def _apply(self, state: SessionState, candidate: Candidate) -> SessionState:
        """Persist ``candidate``'s record, then hold it as the session's state (the old plan stays on failure).

        :raises RefreshNotPersisted: the record could not be appended.
        """
        agent = state.info.agent
        try:
            self._services.append_record(agent, candidate.environment.to_record())
        except Exception as error:
            raise RefreshNotPersisted(detail=f"{type(error).__name__}: {error}") from error
        added = frozenset(c.name for c in candidate.diff.added if c.name)
        turned_off = {n: v for n, v in state.turned_off.items() if n not in added}
        turned_off.update(dict.fromkeys(candidate.diff.removed_names(), candidate.sequence))
        applied = state.refreshed(candidate.today, candidate.environment, candidate.presented, turned_off)
        return self._opener.hold(applied, candidate.today.skills, candidate.view)

    def apply_pending(self, state: SessionState) -> SessionState:
        """Apply the refresh that waited for a cell; a failure keeps the old plan and is shown by ``/capabilities``."""
        assert state.pending is not None
        try:
            return self._apply(state, state.pending)
        except RefreshFailed as error:
            failed = attrs.evolve(state, pending=None, refresh_failure=error.message())
            return self._table.put(failed)
