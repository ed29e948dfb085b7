"""One controller per host: answers every plugin hook from per-session state.

Session start computes the environment once (gate, runtime readiness,
catalog, the capability plan) and persists it; resume restores it from the
record and never recomputes. A child agent's plan is computed in its own
scope, bounded by its parent's plan (recorded at fork). The controller owns the host's code runtime, so shutdown
aborts and awaits live runs and refuses new ones.
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
    SessionRecord,
    StepInfo,
    ToolCall,
    ToolDefinition,
    ToolSpec,
)
from hookspecs.i18n import message
from ptc_plus.capabilities.catalog import Catalog, build_catalog
from ptc_plus.capabilities.cost import choose_counter
from ptc_plus.capabilities.snapshot import CatalogSnapshot
from ptc_plus.config import LoadedConfig, load_config
from ptc_plus.gate import evaluate_gate, resolve_gate_settings
from ptc_plus.runtime.limits import RunLimits
from ptc_plus.runtime.runtime import CodeRuntime
from ptc_plus.runtime.tool import TOOL_NAME, run_code_definition
from ptc_plus.session.environment import Environment, GateSummary, RestoreStatus, restore
from ptc_plus.session.limits import SessionLimits, session_limits
from ptc_plus.session.membership import discovery_snapshot, excluded_skills, excluded_tools, program_view
from ptc_plus.session.projection import MODEL_LANG, bootstrap_section, catalog_message, native_tools
from ptc_plus.session.provision import session_plan
from ptc_plus.session.readiness import Readiness, sandbox_readiness
from ptc_plus.session.report import COMMAND, capabilities_receipt

DELIVERED_KIND = "ptc-catalog-delivered/v1"
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
    delivered: bool = False
    diagnostics: tuple[str, ...] = ()

    @property
    def ptc(self) -> bool:
        return self.environment is not None and self.environment.ptc


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
        readiness = (
            sandbox_readiness(limits) if decision.enabled else Readiness(usable=False, reason=f"gate:{decision.reason}")
        )
        gate = GateSummary(
            enabled=decision.enabled,
            stage=str(decision.stage),
            reason=decision.reason,
            debug_run=decision.debug_run,
            warnings=tuple(w.render("en") for w in decision.warnings),
        )
        counter = choose_counter(self.services.token_counter)
        parent_members = self._parents.pop(info.agent.session_id, None)
        environment = Environment(
            ptc=readiness.usable,
            native_reason=readiness.reason,
            gate=gate,
            token_unit=counter.unit,
            plan=session_plan(catalog, loaded, counter, parent_members=parent_members),
        )
        self.services.append_record(info.agent, environment.to_record())
        diagnostics = _config_diagnostics(loaded, configured)
        state = SessionState(
            info=info, environment=environment, limits=limits, catalog=catalog, diagnostics=diagnostics
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
        """Restore the environment from the session's record; never recompute the plan."""
        records = self.services.read_records(info.agent)
        restored = restore(records)
        loaded = load_config(info.workspace)
        configured = session_limits(loaded.config.runtime, resolve_gate_settings(os.environ, loaded))
        limits = configured.limits
        catalog = build_catalog(tools=self._host_view(info.agent), skills=self.services.skills(info.agent))
        diagnostics = list(_config_diagnostics(loaded, configured))
        if restored.status is not RestoreStatus.RESTORED:
            diagnostics.append(message(f"ptc.restore.{restored.status.value}", detail=restored.detail))
        environment = restored.environment
        if environment is not None:
            diagnostics.extend(_host_drift(environment, catalog))
        delivered = any(r.kind == DELIVERED_KIND for r in records)
        state = SessionState(
            info=info,
            environment=environment,
            limits=limits,
            catalog=catalog,
            delivered=delivered,
            diagnostics=tuple(diagnostics),
        )
        self._sessions[info.agent.session_id] = state
        self._snapshots.pop(info.agent.session_id, None)
        return state

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
        state = self.session(context.agent)
        if state is None or not state.ptc or state.environment is None:
            return None
        return native_tools(context.tools, state.environment.managed_names())

    def skill_catalog(self, context: PromptContext) -> list[str] | None:
        """Under code mode the plan's catalog message carries skill lines, so the host lists none
        (a plan-independent answer: the system prompt stays a stable prefix)."""
        state = self.session(context.agent)
        if state is None or not state.ptc or state.environment is None:
            return None
        return []

    def context_messages(self, step: StepInfo) -> list[ContextMessage]:
        state = self.session(step.agent)
        if state is None or not state.ptc or state.delivered or state.environment is None:
            return []
        self.services.append_record(step.agent, SessionRecord(kind=DELIVERED_KIND, payload={"version": 1}))
        self._sessions[step.agent.session_id] = attrs.evolve(state, delivered=True)
        return [catalog_message(state.environment, state.catalog)]

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
        """``/capabilities``: the session's plan, reasons, overage, and why it is native (read-only)."""
        if request.name != COMMAND:
            return None
        state = self.session(request.agent)
        environment = state.environment if state is not None else None
        return capabilities_receipt(environment, state.diagnostics if state is not None else ())

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

    def _namespace(self, agent: AgentRef, view: Sequence[ToolSpec]) -> Sequence[ToolSpec]:
        state = self.session(agent)
        return program_view(state.environment if state is not None else None, view)


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
