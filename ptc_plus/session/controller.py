"""One controller per host: answers every plugin hook from per-session state.

Session start computes the environment once (gate, runtime readiness,
catalog, the capability plan) from the facts of now (:mod:`.opening`) and
persists it; resume restores it from the
record and never recomputes the plan. The gate and the sandbox, though, are
facts of today: resume checks both again, and a session whose gate is now
closed or whose sandbox is now missing is presented natively, saying why
(ADR 0053). Both build the session's one :class:`~.membership.Membership`
on one path (:meth:`PtcController._hold`); every projection reads it. A
child agent's plan is computed in its own scope, bounded by its parent's
plan (found through ``AgentRef.parent_session_id``). The catalog counts as delivered only
once the host is proven to have committed it (:mod:`.delivery`); a session
that went native gets a notice superseding the catalog it saw. The
controller owns the host's code runtime, so shutdown aborts and awaits live
runs and refuses new ones. It also observes each session family's usage
(what its agents had available, what reached an owner) and records the
family's sample when the host says the family settled (:mod:`.usage`, ADR 0067).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import attrs

from hookspecs import (
    AgentRef,
    CommandReceipt,
    CommandRequest,
    ContextMessage,
    FamilySettlement,
    HostServices,
    PromptContext,
    PromptSection,
    Refusal,
    SessionInfo,
    SkillSpec,
    StepInfo,
    ToolCall,
    ToolDefinition,
    ToolResult,
    ToolSpec,
    TurnSummary,
)
from ptc_plus.capabilities import Catalog, CatalogSnapshot, choose_counter
from ptc_plus.config import WORKSPACE_DIR, Presentation
from ptc_plus.i18n import message
from ptc_plus.runtime import CodeRuntime, RunLimits, run_code_definition
from ptc_plus.session.delivery import Delivery, Offer, Shown, offer_record, proof_record, shown_from
from ptc_plus.session.environment import Environment, RestoreStatus, restore
from ptc_plus.session.membership import Membership, freeze_membership
from ptc_plus.session.opening import host_drift, host_view, read_today
from ptc_plus.session.presentation import Checked, InForce, decide, unproven
from ptc_plus.session.projection import (
    MODEL_LANG,
    bootstrap_section,
    catalog_message,
    navigation,
    withdrawn_message,
)
from ptc_plus.session.provision import session_plan
from ptc_plus.session.readiness import sandbox_readiness
from ptc_plus.session.report import COMMAND, SessionView, capabilities_receipt
from ptc_plus.session.usage import FamilyUsage, agent_offers, prior_samples
from ptc_plus.statistics import FamilyObserver, real_workspace, record_settled

__all__ = ["PtcController", "SessionState"]


@attrs.frozen(kw_only=True)
class SessionState:
    """What the plugin holds for one session; replaced (never mutated) on change."""

    info: SessionInfo
    environment: Environment | None
    """``None``: the session keeps the host's own provision (no record, or an unproven one)."""
    limits: RunLimits
    catalog: Catalog
    presented: InForce
    """The presentation in force now and why (checked at start, and again at resume)."""
    membership: Membership | None = None
    """Who belongs under code mode, frozen with the environment (``None``: no environment)."""
    delivery: Delivery = attrs.field(factory=Delivery)
    gate_warnings: tuple[str, ...] = ()
    diagnostics: tuple[str, ...] = ()

    @property
    def ptc(self) -> bool:
        """Code mode is in force (presentation ``ptc`` or ``both``)."""
        return self.environment is not None and self.presented.code_mode

    @property
    def presentation(self) -> Presentation:
        return self.presented.presentation if self.environment is not None else Presentation.NATIVE


class PtcController:
    def __init__(self, services: HostServices) -> None:
        self.services = services
        self._sessions: dict[str, SessionState] = {}
        self._runtimes: dict[RunLimits, tuple[CodeRuntime, ToolDefinition]] = {}
        self._closed = False
        self.usage = FamilyObserver()
        self._usage_written: dict[str, FamilyUsage] = {}
        """Session id -> the family usage record last written into (or read from) that session's log."""

    # -- lifecycle ---------------------------------------------------------------------
    def start(self, info: SessionInfo) -> SessionState:
        """Compute the session's plan once, persist it as its environment record, and hold it."""
        today = read_today(self.services, info)
        catalog, limits = today.catalog, today.configured.limits
        presentation = today.loaded.config.runtime.presentation
        presented = decide(presentation, today.decision, lambda: sandbox_readiness(limits))
        gate = today.gate
        counter = choose_counter(self.services.token_counter)
        parent_members = self._parent_members(info.agent)
        environment = Environment(
            ptc=presented.code_mode,
            native_reason=presented.reason,
            presentation=presentation,
            gate=gate,
            token_unit=counter.unit,
            plan=session_plan(
                catalog,
                today.loaded,
                counter,
                parent_members=parent_members,
                # Statistics are read where they are recorded: the workspace's resolved real path (ADR 0067).
                workspace=Path(real_workspace(info.workspace)),
            ),
        )
        self.services.append_record(info.agent, environment.to_record())
        state = SessionState(
            info=info,
            environment=environment,
            limits=limits,
            catalog=catalog,
            presented=presented,
            gate_warnings=gate.warnings,
            diagnostics=tuple(today.diagnostics()),
        )
        return self._hold(state, today.skills)

    def _parent_members(self, agent: AgentRef) -> frozenset[str] | None:
        """The parent's effective identities (``None``: no parent, or one without code mode).

        Read from this controller's own state through ``agent.parent_session_id``: the
        child's plan never gains what the parent's plan lacks.
        """
        parent = self._sessions.get(agent.parent_session_id) if agent.parent_session_id else None
        if parent is None or not parent.ptc or parent.environment is None:
            return None
        return frozenset(e.identity for e in parent.environment.plan.effective())

    def resume(self, info: SessionInfo) -> SessionState:
        """Restore the environment from the session's record; never recompute the plan.

        The configured presentation is frozen with the plan; the gate and the
        sandbox are checked again now, since either may have changed while
        the session was closed (kill switch, rollout, another machine).
        """
        records = self.services.read_records(info.agent)
        restored = restore(records)
        today = read_today(self.services, info)
        catalog, limits = today.catalog, today.configured.limits
        diagnostics = today.diagnostics()
        if restored.status is not RestoreStatus.RESTORED:
            diagnostics.append(message(f"ptc.restore.{restored.status.value}", detail=restored.detail))
        environment = restored.environment
        gate_warnings: tuple[str, ...] = ()
        if environment is None:
            presented = unproven(restored.status.value)
        else:
            diagnostics.extend(host_drift(environment, catalog))
            gate_warnings = today.gate.warnings
            presented = decide(
                environment.presentation, today.decision, lambda: sandbox_readiness(limits), checked=Checked.RESUME
            )
        state = SessionState(
            info=info,
            environment=environment,
            limits=limits,
            catalog=catalog,
            presented=presented,
            delivery=Delivery(shown=shown_from(records)),
            gate_warnings=gate_warnings,
            diagnostics=tuple(diagnostics),
        )
        # The family settled before, maybe in another process: its revision keeps the use counted then.
        if prior := prior_samples(records):
            self.usage.restore(info.agent.family_id, prior)
            self._usage_written[info.agent.session_id] = FamilyUsage(family_id=info.agent.family_id, samples=prior)
        return self._hold(state, today.skills)

    def _hold(self, state: SessionState, skills: Sequence[SkillSpec]) -> SessionState:
        """Freeze the session's membership (start and resume alike) and hold the state."""
        membership = None
        if state.environment is not None:
            membership = freeze_membership(
                state.environment,
                state.catalog,
                skills,
                choose_counter(self.services.token_counter),
                direct=state.presentation is Presentation.BOTH,
                code_mode=state.ptc,
            )
        held = attrs.evolve(state, membership=membership)
        self._sessions[state.info.agent.session_id] = held
        agent = state.info.agent
        offers = agent_offers(state.info, state.environment, state.catalog, skills, code_mode=held.ptc)
        self.usage.hold(agent.family_id, agent.session_id, offers)
        return held

    def turn_settled(self, summary: TurnSummary) -> None:
        """A settled turn proves every one of its steps was accepted: an offer made in it was committed."""
        state = self.session(summary.agent)
        if state is not None and state.delivery.proven_by_turn(summary.turn):
            self._prove(state)

    def dispatching(self, call: ToolCall, spec: ToolSpec) -> None:
        """The host runs ``call``'s ``tool-execute`` seam (top-level or nested): it reached its owner."""
        self.usage.dispatching(call, spec)

    def dispatched(self, call: ToolCall, spec: ToolSpec, result: ToolResult) -> None:
        self.usage.dispatched(call, spec, result)

    def family_settled(self, family: FamilySettlement) -> None:
        """The host proved the family settled: record its samples (a later settlement revises them).

        Members merely created (never started) contribute nothing; a family
        none of whose members started is no sample. Store problems are logged,
        never raised (:func:`~ptc_plus.statistics.record_settled`). The samples
        are then written into each member this host holds whose log does not
        have them yet, so that resuming any of them, in another process too,
        revises the family's sample instead of starting over from what it sees anew.
        """
        started = {m.agent.session_id for m in family.members if m.started}
        settled = self.usage.settle(family.family_id, family.root.session_id, started)
        if not settled.workspaces:
            return
        record_settled(settled)
        usage = FamilyUsage(family_id=family.family_id, samples=settled.workspaces)
        for member in family.members:
            sid = member.agent.session_id
            if sid in self._sessions and self._usage_written.get(sid) != usage:
                self.services.append_record(member.agent, usage.to_record())
                self._usage_written[sid] = usage

    async def aclose(self) -> None:
        """Refuse new runs, then abort and await live ones."""
        self._closed = True
        for runtime, _ in self._runtimes.values():
            await runtime.aclose()

    def session(self, agent: AgentRef) -> SessionState | None:
        return self._sessions.get(agent.session_id)

    # -- projections ---------------------------------------------------------------------
    def tools(self, agent: AgentRef) -> list[ToolDefinition]:
        state = self.session(agent)
        if state is None or not state.ptc or self._closed:
            return []
        return [self._definition(state.limits)]

    def prompt_sections(self, context: PromptContext) -> list[PromptSection]:
        state = self.session(context.agent)
        return [bootstrap_section()] if state is not None and state.ptc else []

    def model_tools(self, context: PromptContext) -> list[str] | None:
        """Under ``ptc``: ``run_code`` and unmanaged tools; under ``both`` also the plan's ``full`` tools.

        Like the system prompt, the list must be a stable prefix. Under
        ``both`` it follows the frozen plan, so it never moves within a
        session; between sessions the ``full`` set follows the config and the
        host's view, and statistics would move it only once they vote (ADR 0037).
        """
        state = self.session(context.agent)
        if state is None or not state.ptc or state.membership is None:
            return None
        return state.membership.native_tools(context.tools)

    def skill_catalog(self, context: PromptContext) -> list[str] | None:
        """Under code mode the plan's catalog message carries skill lines, so the host lists none
        (a plan-independent answer: the system prompt stays a stable prefix)."""
        state = self.session(context.agent)
        if state is None or not state.ptc or state.environment is None:
            return None
        return []

    def context_messages(self, step: StepInfo) -> list[ContextMessage]:
        """Offer the catalog (code mode) or the notice superseding it (gone native), until one is proven committed.

        Nothing is recorded as delivered here: the host commits the answer only
        after every plugin answered, so the proof comes later (a later step of
        this turn, or the turn settling). An unproven offer is simply made
        again; if it had been committed after all, the new message supersedes
        it. A catalog offer is recorded as an offer, so that a session resumed
        native before any proof still supersedes what it may have committed.
        """
        state = self.session(step.agent)
        if state is None:
            return []
        if state.delivery.proven_by_step(step):
            state = self._prove(state)
        wanted = state.delivery.wanted(state.ptc)
        if wanted is None:
            return []
        if wanted is Shown.CATALOG and state.environment is not None:
            counter = choose_counter(self.services.token_counter)
            offered = catalog_message(state.environment, state.catalog, counter, state.presentation)
        else:
            offered = withdrawn_message()
        offer = Offer(shown=wanted, turn=step.turn, step=step.step)
        if wanted is Shown.CATALOG:
            self.services.append_record(step.agent, offer_record(offer))
        self._sessions[step.agent.session_id] = attrs.evolve(state, delivery=attrs.evolve(state.delivery, offer=offer))
        return [offered]

    def discovery(self, agent: AgentRef) -> CatalogSnapshot | None:
        """What discovery answers from for ``agent``: the plan's effective set (``None``: no code mode)."""
        state = self.session(agent)
        if state is None or not state.ptc or state.membership is None:
            return None
        return state.membership.snapshot

    def guard(self, call: ToolCall, spec: ToolSpec) -> Refusal | None:
        """Under code mode nobody reaches excluded members, at any depth: not a program crafting a
        name, not a model (or a crafted call) naming one at the top level (defence in depth).
        A skill the plan leaves out does not load through its host's loader, whatever its name."""
        state = self.session(call.caller)
        if state is None or not state.ptc or state.membership is None:
            return None
        membership = state.membership
        if not membership.reaches(spec.name):
            return Refusal(code="capability-off", reason=message("ptc.guard.off", MODEL_LANG, tool=spec.name))
        skill = membership.skills.refuses(
            call, self.services.skills(call.caller) if call.tool in membership.skills.arguments else ()
        )
        if skill is not None:
            return Refusal(code="capability-off", reason=message("ptc.guard.off", MODEL_LANG, tool=skill))
        return None

    # -- commands ---------------------------------------------------------------------------
    def command(self, request: CommandRequest) -> CommandReceipt | None:
        """``/capabilities``: presentation and why, the plan, reasons, overage, catalog delivery (read-only)."""
        if request.name != COMMAND:
            return None
        state = self.session(request.agent)
        if state is None:
            view = SessionView(presented=InForce(presentation=Presentation.NATIVE))
            return capabilities_receipt(None, (), view)
        counter = choose_counter(self.services.token_counter)
        environment = state.environment
        direct: tuple[str, ...] = ()
        late: tuple[str, ...] = ()
        if state.ptc and state.membership is not None:
            # Natively the host's own provision applies: nothing is direct or withheld.
            tools = host_view(self.services, request.agent)
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
        )
        return capabilities_receipt(environment, state.diagnostics, view)

    # -- internals ------------------------------------------------------------------------
    def _definition(self, limits: RunLimits) -> ToolDefinition:
        entry = self._runtimes.get(limits)
        if entry is None:
            runtime = CodeRuntime(limits, owner_paths=(WORKSPACE_DIR,))
            entry = (
                runtime,
                run_code_definition(runtime=runtime, namespace_filter=self._namespace, discovery=self.discovery),
            )
            self._runtimes[limits] = entry
        return entry[1]

    def _prove(self, state: SessionState) -> SessionState:
        """Record the pending offer as committed by the host and hold the proven state."""
        offer = state.delivery.offer
        if offer is None:
            return state
        reason = state.presented.reason if offer.shown is Shown.NOTICE else ""
        self.services.append_record(state.info.agent, proof_record(offer, reason))
        proven = attrs.evolve(state, delivery=Delivery(shown=offer.shown))
        self._sessions[state.info.agent.session_id] = proven
        return proven

    def _namespace(self, agent: AgentRef, view: Sequence[ToolSpec]) -> Sequence[ToolSpec]:
        state = self.session(agent)
        if state is None or state.membership is None:
            return list(view)
        return state.membership.program_view(view)
