"""Delivery: the context messages a session owes its model, and the proof that the host committed them.

The catalog counts as delivered only once the host is proven to have
committed it (:mod:`.delivery`); a session that went native gets a notice
superseding the catalog it saw. The catalog message is the session's frozen
view's, built once per environment (:mod:`.view`); after a refresh it opens
with the refresh notice. After it come the contract messages: the recovery
a compaction left owing, then the expansions of what programs looked up
(:mod:`.contract_memory`, ADR 0070).
"""

from __future__ import annotations

import attrs

from hookspecs import AgentRef, CompactionInfo, ContextMessage, HostServices, StepInfo, ToolCall, ToolSpec, TurnSummary
from ptc_plus.capabilities import choose_counter
from ptc_plus.config import Disclosure
from ptc_plus.plan import PlanDiff, plan_diff
from ptc_plus.session.contract_memory import Compacted, ContractDesk, Event, catalog_kept
from ptc_plus.session.contract_messages import expansion, recovery, superseded
from ptc_plus.session.delivery import Delivery, Offer, Shown, dropped, offer_record, proof_record
from ptc_plus.session.environment import KIND, Environment, restore
from ptc_plus.session.opening import host_revisions
from ptc_plus.session.projection import withdrawn_message
from ptc_plus.session.refresh import notice_header
from ptc_plus.session.repl_journal import hide_compacted_cells
from ptc_plus.session.state import SessionState
from ptc_plus.session.table import SessionTable


class Deliverer:
    """What one controller's sessions are owed on their surface, offered step by step until proven."""

    def __init__(self, services: HostServices, table: SessionTable, contracts: ContractDesk) -> None:
        self._services = services
        self._table = table
        self._contracts = contracts

    def context_messages(self, step: StepInfo) -> list[ContextMessage]:
        """The plan's message (catalog, refresh notice or withdrawal) while one is owed, then the contracts'."""
        state = self._table.get(step.agent)
        if state is None:
            return []
        messages = self._plan_messages(state, step)
        messages += self._contract_messages(self._table.get(step.agent) or state)
        return messages

    def turn_settled(self, summary: TurnSummary) -> None:
        """A settled turn proves every one of its steps was accepted: an offer made in it was committed."""
        state = self._table.get(summary.agent)
        if state is not None and state.delivery.proven_by_turn(summary.turn):
            self._prove(state)

    def dispatched(self, call: ToolCall, spec: ToolSpec) -> None:
        """An expanded contract used since is what a compaction recovery re-delivers (ADR 0070)."""
        if (used := self._contracts.memory(call.caller).use(spec.identity)) is not None:
            self._services.append_record(call.caller, self._contracts.record(call.caller, used))

    def compaction(self, info: CompactionInfo) -> None:
        """The host compacted the session's surface: what its messages showed and it did not keep is gone.

        The recovery is owed to the next model step (:meth:`_contract_messages`). Whether the catalog
        survived is :func:`~.contract_memory.catalog_kept` of ``info``.
        """
        state = self._table.get(info.agent)
        if state is None:
            return
        self._remember(info.agent, Compacted(kept=info.kept_provenances))
        hide_compacted_cells(self._services, info)
        if not catalog_kept(info):  # the catalog (or the notice) went with it: owed again at the next step
            self._table.put(attrs.evolve(state, delivery=dropped(state.delivery)))

    def _plan_messages(self, state: SessionState, step: StepInfo) -> list[ContextMessage]:
        """Offer the catalog (code mode) or the notice superseding it (gone native), until one is proven committed.

        Nothing is recorded as delivered here: the host commits the answer only
        after every plugin answered, so the proof comes later (a later step of
        this turn, or the turn settling). An unproven offer is simply made
        again; if it had been committed after all, the new message supersedes
        it. A catalog offer is recorded as an offer, so that a session resumed
        native before any proof still supersedes what it may have committed.
        After a refresh the catalog is owed again: when the surface carries an
        earlier catalog, the new one opens with the refresh notice (what was
        added, turned off, changed), and supersedes it (ADR 0068).
        """
        if state.delivery.proven_by_step(step):
            state = self._prove(state)
        environment = state.environment
        sequence = environment.sequence if environment is not None else 0
        wanted = state.delivery.wanted(state.ptc, sequence)
        if wanted is None:
            return []
        catalog = state.view.catalog if state.view is not None else None
        if wanted is Shown.CATALOG and environment is not None and catalog is not None:
            offered = catalog
            if sequence and state.delivery.carries_catalog() and state.delivery.refresh < sequence:
                header = notice_header(sequence, self._seen_diff(state, environment))
                offered = attrs.evolve(offered, text=header + "\n\n" + offered.text)
        else:
            offered = withdrawn_message()
        offer = Offer(shown=wanted, turn=step.turn, step=step.step, refresh=sequence)
        if wanted is Shown.CATALOG:
            self._services.append_record(step.agent, offer_record(offer))
        self._table.put(attrs.evolve(state, delivery=attrs.evolve(state.delivery, offer=offer)))
        return [offered]

    def _seen_diff(self, state: SessionState, environment: Environment) -> PlanDiff:
        """What changed since the catalog the surface carries: the refresh's own diff when the model saw the
        plan just before it, else the diff from the plan of the refresh it last saw (read from the records)."""
        assert environment.refresh is not None
        seen = state.delivery.refresh
        if seen == environment.sequence - 1:
            return environment.refresh.diff
        for record in reversed(self._services.read_records(state.info.agent, KIND)):
            earlier = restore([record]).environment
            if earlier is not None and earlier.sequence == seen:
                return plan_diff(earlier.plan, environment.plan)
        return environment.refresh.diff

    def _prove(self, state: SessionState) -> SessionState:
        """Record the pending offer as committed by the host and hold the proven state."""
        offer = state.delivery.offer
        if offer is None:
            return state
        reason = state.presented.reason if offer.shown is Shown.NOTICE else ""
        self._services.append_record(state.info.agent, proof_record(offer, reason))
        return self._table.put(attrs.evolve(state, delivery=Delivery(shown=offer.shown, refresh=offer.refresh)))

    def _contract_messages(self, state: SessionState) -> list[ContextMessage]:
        """After the plan's message: the recovery a compaction left owing, then the expansion of what the
        session's programs looked up since the last step, and of old contracts still on the surface that a
        refresh revised (each at most once, within its budget; ADR 0070, ADR 0090)."""
        agent = state.info.agent
        incoming = self._contracts.take(agent)
        snapshot = state.membership.snapshot if state.membership is not None else None
        if not state.ptc or state.environment is None or snapshot is None:
            return []
        counter = choose_counter(self._services.token_counter)
        full = frozenset(e.identity for e in state.environment.with_disclosure(Disclosure.FULL))
        messages: list[ContextMessage] = []
        if (memory := self._contracts.memory(agent)).recovery_due:
            host = host_revisions(self._services, agent, memory.used)
            owed = recovery(memory, snapshot, full, counter, state.context.recovery_tokens, host)
            if owed.event is not None:
                self._remember(agent, owed.event)
            if new := tuple(d for d in owed.diagnostics if d not in state.diagnostics):
                state = self._table.put(attrs.evolve(state, diagnostics=(*state.diagnostics, *new)))
            messages += [owed.message] if owed.message is not None else []
        # Old contracts still on the surface (a refresh revised them) go again at the revision offered now.
        if incoming := (*superseded(self._contracts.memory(agent), snapshot, full), *incoming):
            offered = expansion(
                self._contracts.memory(agent), incoming, snapshot, full, counter, state.context.discovery_tokens
            )
            if offered.event is not None:
                self._remember(agent, offered.event)
            messages += [offered.message] if offered.message is not None else []
        return messages

    def _remember(self, agent: AgentRef, event: Event) -> None:
        self._services.append_record(agent, self._contracts.record(agent, event))
