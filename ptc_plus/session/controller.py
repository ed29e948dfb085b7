"""One controller per host: answers every plugin hook from per-session state.

Session start computes the environment once (gate, runtime readiness,
catalog, the capability plan) and persists it; resume restores it from the
record and never recomputes the plan. The gate and the sandbox, though, are
facts of today: resume checks both again, and a session whose gate is now
closed or whose sandbox is now missing is presented natively, saying why
(ADR 0053). A child agent's plan is computed in its own scope, bounded by
its parent's plan (recorded at fork). The catalog counts as delivered only
once the host is proven to have committed it (:mod:`.delivery`); a session
that went native gets a notice superseding the catalog it saw. The
controller owns the host's code runtime, so shutdown aborts and awaits live
runs and refuses new ones.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import attrs

from hookspecs import (
    AgentRef,
    CommandReceipt,
    CommandRequest,
    ContextMessage,
    HostServices,
    PromptContext,
    PromptSection,
    Refusal,
    SessionInfo,
    StepInfo,
    ToolCall,
    ToolDefinition,
    ToolSpec,
    TurnSummary,
)
from hookspecs.i18n import message
from ptc_plus.capabilities.catalog import Catalog, build_catalog
from ptc_plus.capabilities.cost import choose_counter
from ptc_plus.capabilities.snapshot import CatalogSnapshot
from ptc_plus.config import LoadedConfig, Presentation, load_config
from ptc_plus.gate import GateDecision, evaluate_gate, resolve_gate_settings
from ptc_plus.runtime.limits import RunLimits
from ptc_plus.runtime.runtime import CodeRuntime
from ptc_plus.runtime.tool import TOOL_NAME, run_code_definition
from ptc_plus.session.delivery import DELIVERED_KIND, Delivery, Offer, Shown, proof_record, shown_from
from ptc_plus.session.environment import Environment, GateSummary, RestoreStatus, restore
from ptc_plus.session.limits import SessionLimits, session_limits
from ptc_plus.session.membership import (
    discovery_snapshot,
    excluded_skills,
    excluded_tools,
    full_tools,
    program_view,
)
from ptc_plus.session.presentation import Checked, InForce, decide, unproven
from ptc_plus.session.projection import (
    MODEL_LANG,
    bootstrap_section,
    catalog_message,
    native_tools,
    navigation,
    withdrawn_message,
)
from ptc_plus.session.provision import session_plan
from ptc_plus.session.readiness import sandbox_readiness
from ptc_plus.session.report import COMMAND, SessionView, capabilities_receipt

__all__ = ["DELIVERED_KIND", "PtcController", "SessionState"]
SKILL_LOADER = "load_skill"
"""The reference host's skill loader: a guard keeps it from loading skills the plan left out."""


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
        self._parents: dict[str, frozenset[str] | None] = {}
        """Child session id -> its parent's effective identities, set at fork, used at the child's start."""
        self._snapshots: dict[str, CatalogSnapshot] = {}
        self._runtimes: dict[RunLimits, tuple[CodeRuntime, ToolDefinition]] = {}
        self._closed = False

    # -- lifecycle ---------------------------------------------------------------------
    def start(self, info: SessionInfo) -> SessionState:
        """Compute the session's plan once, persist it as its environment record, and hold it."""
        loaded = load_config(info.workspace)
        settings = resolve_gate_settings(os.environ, loaded)
        view = self._host_view(info.agent)
        catalog = build_catalog(tools=view, skills=self.services.skills(info.agent))
        decision = evaluate_gate(
            settings, user_id=info.user_id, toolsets=sorted({s.source for s in view}), title=info.title
        )
        configured = session_limits(loaded.config.runtime, settings)
        limits = configured.limits
        presentation = loaded.config.runtime.presentation
        presented = decide(presentation, decision, lambda: sandbox_readiness(limits))
        gate = _gate_summary(decision)
        counter = choose_counter(self.services.token_counter)
        parent_members = self._parents.pop(info.agent.session_id, None)
        environment = Environment(
            ptc=presented.code_mode,
            native_reason=presented.reason,
            presentation=presentation,
            gate=gate,
            token_unit=counter.unit,
            plan=session_plan(catalog, loaded, counter, parent_members=parent_members),
        )
        self.services.append_record(info.agent, environment.to_record())
        diagnostics = _config_diagnostics(loaded, configured)
        state = SessionState(
            info=info,
            environment=environment,
            limits=limits,
            catalog=catalog,
            presented=presented,
            gate_warnings=gate.warnings,
            diagnostics=diagnostics,
        )
        self._sessions[info.agent.session_id] = state
        return state

    def fork(self, parent: SessionInfo, child: SessionInfo) -> None:
        """Remember the parent's scope: the child's plan never gains what the parent's plan lacks."""
        state = self.session(parent.agent)
        members = None
        if state is not None and state.ptc and state.environment is not None:
            members = frozenset(e.identity for e in state.environment.plan.effective())
        self._parents[child.agent.session_id] = members

    def resume(self, info: SessionInfo) -> SessionState:
        """Restore the environment from the session's record; never recompute the plan.

        The configured presentation is frozen with the plan; the gate and the
        sandbox are checked again now, since either may have changed while
        the session was closed (kill switch, rollout, another machine).
        """
        records = self.services.read_records(info.agent)
        restored = restore(records)
        loaded = load_config(info.workspace)
        settings = resolve_gate_settings(os.environ, loaded)
        configured = session_limits(loaded.config.runtime, settings)
        limits = configured.limits
        view = self._host_view(info.agent)
        catalog = build_catalog(tools=view, skills=self.services.skills(info.agent))
        diagnostics = list(_config_diagnostics(loaded, configured))
        if restored.status is not RestoreStatus.RESTORED:
            diagnostics.append(message(f"ptc.restore.{restored.status.value}", detail=restored.detail))
        environment = restored.environment
        gate_warnings: tuple[str, ...] = ()
        if environment is None:
            presented = unproven(restored.status.value)
        else:
            diagnostics.extend(_host_drift(environment, catalog))
            decision = evaluate_gate(
                settings, user_id=info.user_id, toolsets=sorted({s.source for s in view}), title=info.title
            )
            gate_warnings = _gate_summary(decision).warnings
            presented = decide(
                environment.presentation, decision, lambda: sandbox_readiness(limits), checked=Checked.RESUME
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
        self._sessions[info.agent.session_id] = state
        self._snapshots.pop(info.agent.session_id, None)
        return state

    def turn_settled(self, summary: TurnSummary) -> None:
        """A settled turn proves every one of its steps was accepted: an offer made in it was committed."""
        state = self.session(summary.agent)
        if state is not None and state.delivery.proven_by_turn(summary.turn):
            self._prove(state)

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
        if state is None or not state.ptc or state.environment is None:
            return None
        direct = full_tools(state.environment) if state.presentation is Presentation.BOTH else frozenset()
        return native_tools(context.tools, state.environment.managed_names(), direct)

    def skill_catalog(self, context: PromptContext) -> list[str] | None:
        """Under code mode the plan's catalog message carries skill lines, so the host lists none
        (a plan-independent answer: the system prompt stays a stable prefix)."""
        state = self.session(context.agent)
        if state is None or not state.ptc or state.environment is None:
            return None
        return []

    def context_messages(self, step: StepInfo) -> list[ContextMessage]:
        """Offer the catalog (code mode) or the notice superseding it (gone native), until one is proven committed.

        Nothing is recorded here: the host commits the answer only after every
        plugin answered, so the proof comes later (a later step of this turn,
        or the turn settling). An unproven offer is simply made again; if it
        had been committed after all, the new message supersedes it.
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
        self._sessions[step.agent.session_id] = attrs.evolve(state, delivery=attrs.evolve(state.delivery, offer=offer))
        return [offered]

    def discovery(self, agent: AgentRef) -> CatalogSnapshot | None:
        """What discovery answers from for ``agent``: the plan's effective set (``None``: no code mode)."""
        state = self.session(agent)
        if state is None or not state.ptc or state.environment is None:
            return None
        snapshot = self._snapshots.get(agent.session_id)
        if snapshot is None:
            counter = choose_counter(self.services.token_counter)
            snapshot = self._snapshots[agent.session_id] = discovery_snapshot(state.environment, state.catalog, counter)
        return snapshot

    def guard(self, call: ToolCall, spec: ToolSpec) -> Refusal | None:
        """Under code mode nobody reaches excluded members, at any depth: not a program crafting a
        name, not a model (or a crafted call) naming one at the top level (defence in depth)."""
        state = self.session(call.caller)
        if state is None or not state.ptc or state.environment is None:
            return None
        if spec.name in excluded_tools(state.environment):
            return Refusal(code="capability-off", reason=message("ptc.guard.off", MODEL_LANG, tool=spec.name))
        if spec.name == SKILL_LOADER and str(call.arguments.get("name")) in excluded_skills(state.environment):
            skill = str(call.arguments.get("name"))
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
        if environment is not None and state.presentation is Presentation.BOTH:
            full = full_tools(environment)
            direct = tuple(s.name for s in self._host_view(request.agent) if s.name in full)
        view = SessionView(
            presented=state.presented,
            direct=direct,
            delivery=state.delivery,
            navigation=navigation(environment, state.catalog, counter) if state.ptc and environment else None,
            unit=counter.unit,
            gate_warnings=state.gate_warnings,
        )
        return capabilities_receipt(environment, state.diagnostics, view)

    # -- internals ------------------------------------------------------------------------
    def _host_view(self, agent: AgentRef) -> list[ToolSpec]:
        return [s for s in self.services.tool_view(agent) if s.name != TOOL_NAME]

    def _definition(self, limits: RunLimits) -> ToolDefinition:
        entry = self._runtimes.get(limits)
        if entry is None:
            runtime = CodeRuntime(limits)
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
        return program_view(state.environment if state is not None else None, view)


def _gate_summary(decision: GateDecision) -> GateSummary:
    return GateSummary(
        enabled=decision.enabled,
        stage=str(decision.stage),
        reason=decision.reason,
        debug_run=decision.debug_run,
        warnings=tuple(w.render("en") for w in decision.warnings),
    )


def _config_diagnostics(loaded: LoadedConfig, configured: SessionLimits) -> tuple[str, ...]:
    """Every config issue, then why configured run limits were not used (if they were not)."""
    found = [message("ptc.report.config-issue", issue=issue.message()) for issue in loaded.issues]
    if configured.diagnostic is not None:
        found.append(configured.diagnostic)
    return tuple(found)


def _host_drift(environment: Environment, catalog: Catalog) -> list[str]:
    """Members gone from the host, or whose contract changed, follow the host fact with a diagnostic.

    Nothing is re-ranked: the recorded plan stays as it was.
    """
    found: list[str] = []
    for entry in environment.plan.effective():
        current = catalog.get(entry.identity)
        if current is None:
            found.append(message("ptc.restore.vanished", identity=entry.identity))
        elif entry.revision and current.revision != entry.revision:
            found.append(
                message(
                    "ptc.restore.revised", identity=entry.identity, recorded=entry.revision, current=current.revision
                )
            )
    return found
