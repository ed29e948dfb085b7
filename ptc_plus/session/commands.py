"""``/capabilities`` and ``/capabilities refresh`` for one controller (ADR 0068).

The commands read and replace the controller's per-session state only through
:class:`PlanHolder`; the transition itself (prepare, validate) lives in
:mod:`.refresh`, the receipts in :mod:`.report`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import attrs

from hookspecs import (
    AgentRef,
    CommandReceipt,
    CommandRequest,
    HostServices,
    ReceiptStatus,
    SessionInfo,
    SkillSpec,
    TokenCounter,
)
from ptc_plus.config import Presentation
from ptc_plus.errors import PtcError
from ptc_plus.i18n import message
from ptc_plus.session.errors import CommandArguments, RefreshFailed, RefreshNotPersisted
from ptc_plus.session.membership import Membership
from ptc_plus.session.opening import Today, host_view
from ptc_plus.session.presentation import InForce
from ptc_plus.session.projection import navigation
from ptc_plus.session.refresh import Candidate, diff_summary, prepare, validate
from ptc_plus.session.report import COMMAND, REFRESH, SessionView, capabilities_receipt, refresh_receipt
from ptc_plus.session.state import SessionState


class PlanHolder(Protocol):
    """What the commands need of the controller that holds the sessions."""

    @property
    def services(self) -> HostServices: ...

    def session(self, agent: AgentRef) -> SessionState | None: ...

    def put(self, state: SessionState) -> None:
        """Hold ``state`` as its session's state now."""

    def hold(self, state: SessionState, skills: Sequence[SkillSpec], membership: Membership | None) -> SessionState:
        """Hold ``state`` with ``membership`` (built from it when ``None``)."""

    def running(self, session_id: str) -> int:
        """How many ``run_code`` cells of the session run now."""

    def children(self, session_id: str) -> int:
        """How many held sessions have ``session_id`` as their parent."""

    def today(self, info: SessionInfo) -> Today:
        """The facts of now for ``info``."""

    def counter(self) -> TokenCounter: ...

    def parent_members(self, agent: AgentRef) -> frozenset[str] | None: ...


class CapabilitiesCommands:
    """The ``/capabilities`` command of one controller, and the refresh transition it applies."""

    def __init__(self, holder: PlanHolder) -> None:
        self._holder = holder

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
        state = self._holder.session(agent)
        if state is None:
            view = SessionView(presented=InForce(presentation=Presentation.NATIVE))
            return capabilities_receipt(None, (), view)
        counter = self._holder.counter()
        environment = state.environment
        direct: tuple[str, ...] = ()
        late: tuple[str, ...] = ()
        if state.ptc and state.membership is not None:
            # Natively the host's own provision applies: nothing is direct or withheld.
            tools = host_view(self._holder.services, agent)
            direct = tuple(s.name for s in tools if s.name in state.membership.direct)
            late = tuple(state.membership.late(tools))
        view = SessionView(
            presented=state.presented,
            direct=direct,
            late=late,
            delivery=state.delivery,
            navigation=navigation(environment, state.catalog, counter) if state.ptc and environment else None,
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
        state = self._holder.session(agent)
        if state is None or state.environment is None:
            return refresh_receipt(ReceiptStatus.FAILED, message("ptc.refresh.no-environment"))
        try:
            candidate = validate(self._prepare(state), host_view(self._holder.services, agent), self._holder.counter())
        except RefreshFailed as error:
            return refresh_receipt(ReceiptStatus.FAILED, message("ptc.refresh.failed", reason=error.message()), error)
        live = (state.presentation, candidate.presented.presentation)
        summary = diff_summary(candidate.diff, presentation=live)
        if dry_run:
            return refresh_receipt(ReceiptStatus.SHOWN, message("ptc.refresh.dry-run", summary=summary), candidate)
        if not candidate.changes(state.environment, state.presentation):
            if state.pending is not None:  # the config went back: the waiting refresh has nothing left to do
                self._holder.put(attrs.evolve(state, pending=None))
            return refresh_receipt(ReceiptStatus.UNCHANGED, message("ptc.refresh.unchanged"), candidate)
        running = self._holder.running(agent.session_id)
        if running:
            self._holder.put(attrs.evolve(state, pending=candidate))
            text = message("ptc.refresh.pending", sequence=candidate.sequence, summary=summary, running=running)
            return refresh_receipt(ReceiptStatus.PENDING, text, candidate)
        try:
            self._apply(state, candidate)
        except RefreshFailed as error:
            return refresh_receipt(ReceiptStatus.FAILED, message("ptc.refresh.failed", reason=error.message()), error)
        told = state.ptc or candidate.presented.code_mode  # a native session that stays native sees nothing
        key = "ptc.refresh.applied" if told else "ptc.refresh.applied-quiet"
        text = message(key, sequence=candidate.sequence, summary=summary)
        children = self._holder.children(agent.session_id)
        if children and candidate.diff.removed:
            text += "\n" + message("ptc.refresh.children", count=children)
        return refresh_receipt(ReceiptStatus.APPLIED, text, candidate)

    def _prepare(self, state: SessionState) -> Candidate:
        assert state.environment is not None
        today = self._holder.today(state.info)
        return prepare(
            state.environment, today, state.info, self._holder.counter(), self._holder.parent_members(state.info.agent)
        )

    def _apply(self, state: SessionState, candidate: Candidate) -> SessionState:
        """Persist ``candidate``'s record, then hold it as the session's state (the old plan stays on failure).

        :raises RefreshNotPersisted: the record could not be appended.
        """
        agent = state.info.agent
        try:
            self._holder.services.append_record(agent, candidate.environment.to_record())
        except Exception as error:
            raise RefreshNotPersisted(detail=f"{type(error).__name__}: {error}") from error
        today: Today = candidate.today
        added = frozenset(c.name for c in candidate.diff.added if c.name)
        turned_off = {n: v for n, v in state.turned_off.items() if n not in added}
        turned_off.update(dict.fromkeys(candidate.diff.removed_names(), candidate.sequence))
        applied = attrs.evolve(
            state,
            environment=candidate.environment,
            limits=today.configured.limits,
            catalog=today.catalog,
            presented=candidate.presented,
            gate_warnings=today.gate.warnings,
            diagnostics=tuple(today.diagnostics()),
            context=today.loaded.config.context,
            pending=None,
            turned_off=turned_off,
            refresh_failure="",
        )
        return self._holder.hold(applied, today.skills, candidate.membership)

    def apply_pending(self, state: SessionState) -> SessionState:
        """Apply the refresh that waited for a cell; a failure keeps the old plan and is shown by ``/capabilities``."""
        assert state.pending is not None
        try:
            return self._apply(state, state.pending)
        except RefreshFailed as error:
            failed = attrs.evolve(state, pending=None, refresh_failure=error.message())
            self._holder.put(failed)
            return failed
