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

import attrs

from hookspecs import (
    AgentRef,
    CommandReceipt,
    CommandRequest,
    CompactionInfo,
    ContextMessage,
    FamilySettlement,
    HostServices,
    PromptContext,
    PromptSection,
    Refusal,
    ResultAnnotation,
    SessionInfo,
    SkillSpec,
    StepInfo,
    TokenCounter,
    ToolCall,
    ToolContext,
    ToolDefinition,
    ToolResult,
    ToolSpec,
    TurnSummary,
)
from ptc_plus.adapters.mcp import McpSources, resource_tools
from ptc_plus.capabilities import choose_counter
from ptc_plus.config import WORKSPACE_DIR, Disclosure, Presentation, UserBindings
from ptc_plus.discovery import CatalogSnapshot
from ptc_plus.i18n import message
from ptc_plus.plan import PlanDiff, plan_diff
from ptc_plus.preview import READ_TOOL_NAME, preview_result, read_spill_definition
from ptc_plus.runtime import TOOL_NAME, CodeRuntime, KernelCell, RunLimits, run_code_definition
from ptc_plus.session.commands import CapabilitiesCommands
from ptc_plus.session.contract_memory import Compacted, ContractDesk, Event, catalog_kept
from ptc_plus.session.contract_messages import expansion, recovery, superseded
from ptc_plus.session.delivery import Delivery, Offer, Shown, delivery_from, dropped, offer_record, proof_record
from ptc_plus.session.environment import KIND, Environment, RestoreStatus, restore
from ptc_plus.session.membership import Membership, freeze_membership
from ptc_plus.session.opening import Today, host_drift, host_revisions, read_today
from ptc_plus.session.presentation import Checked, decide, unproven
from ptc_plus.session.projection import (
    MODEL_LANG,
    bootstrap_section,
    catalog_message,
    withdrawn_message,
)
from ptc_plus.session.readiness import sandbox_readiness
from ptc_plus.session.refresh import notice_header, opening_environment
from ptc_plus.session.repl_journal import hide_compacted_cells, session_cell
from ptc_plus.session.report import (
    turned_off_from,
)
from ptc_plus.session.state import SessionState
from ptc_plus.session.usage import FamilyUsage, agent_offers, prior_samples
from ptc_plus.statistics import FamilyObserver, record_settled

__all__ = ["PtcController", "SessionState"]


class PtcController:
    def __init__(self, services: HostServices) -> None:
        self.services = services
        self._sessions: dict[str, SessionState] = {}
        self._runtimes: dict[RunLimits, tuple[CodeRuntime, ToolDefinition]] = {}
        self._closed = False
        self._cells: dict[str, set[str]] = {}
        """Session id -> ids of its ``run_code`` calls running now (a refresh waits for none to run)."""
        self.usage = FamilyObserver()
        self._usage_written: dict[str, FamilyUsage] = {}
        """Session id -> the family usage record last written into (or read from) that session's log."""
        self.contracts = ContractDesk()
        """Each session's memory of expanded, shown and used contracts (ADR 0070)."""
        self.mcp = McpSources()
        """The MCP servers each session uses (shared with the process's other controllers by the hub)."""
        self.commands = CapabilitiesCommands(self)
        self._resource_tools = resource_tools(
            lambda agent: self.mcp.resource_servers(agent.session_id), self._resource_servers_allowed
        )

    # -- lifecycle ---------------------------------------------------------------------
    def start(self, info: SessionInfo) -> SessionState:
        """Compute the session's plan once, persist it as its environment record, and hold it."""
        today = read_today(self.services, info, self.mcp)
        counter = choose_counter(self.services.token_counter)
        environment, presented = opening_environment(today, info, counter, self._parent_members(info.agent))
        self.services.append_record(info.agent, environment.to_record())
        state = SessionState(
            info=info,
            environment=environment,
            limits=today.configured.limits,
            catalog=today.catalog,
            presented=presented,
            gate_warnings=today.gate.warnings,
            diagnostics=tuple(today.diagnostics()),
            context=today.loaded.config.context,
            bindings=today.bindings,
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
        today = read_today(self.services, info, self.mcp)
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
            delivery=delivery_from(records),
            gate_warnings=gate_warnings,
            diagnostics=tuple(diagnostics),
            context=today.loaded.config.context,
            bindings=today.bindings,
            turned_off=turned_off_from(records),
        )
        # The family settled before, maybe in another process: its revision keeps the use counted then.
        if prior := prior_samples(records):
            self.usage.restore(info.agent.family_id, prior)
            self._usage_written[info.agent.session_id] = FamilyUsage(family_id=info.agent.family_id, samples=prior)
        self.contracts.restore(info.agent, records)
        return self._hold(state, today.skills)

    def _hold(
        self, state: SessionState, skills: Sequence[SkillSpec], membership: Membership | None = None
    ) -> SessionState:
        """Freeze the session's membership (start, resume and refresh alike; a refresh brings the one it
        validated) and hold the state."""
        if membership is None and state.environment is not None:
            membership = freeze_membership(
                state.environment,
                state.catalog,
                skills,
                choose_counter(self.services.token_counter),
                direct=state.presentation is Presentation.BOTH,
                code_mode=state.ptc,
                discovery_budget=state.context.discovery_tokens,
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
        """The host runs ``call``'s ``tool-execute`` seam (top-level or nested): it reached its owner.

        A ``run_code`` call starting here is a running cell until :meth:`released`: a refresh
        waits for the session's cells, so none of them ever mixes old and new members.
        """
        if call.tool == TOOL_NAME and call.parent_call_id is None:
            self._cells.setdefault(call.caller.session_id, set()).add(call.call_id)
        self.usage.dispatching(call, spec)

    def released(self, call: ToolCall) -> None:
        """``call``'s ``tool-execute`` seam returned or raised: a cell that ended may let a pending refresh apply."""
        cells = self._cells.get(call.caller.session_id)
        if cells is None or call.call_id not in cells:
            return
        cells.discard(call.call_id)
        state = self.session(call.caller)
        if not cells and state is not None and state.pending is not None:
            self.commands.apply_pending(state)

    def dispatched(self, call: ToolCall, spec: ToolSpec, result: ToolResult) -> None:
        self.usage.dispatched(call, spec, result)
        # An expanded contract used since is what a compaction recovery re-delivers (ADR 0070).
        if (used := self.contracts.memory(call.caller).use(spec.identity)) is not None:
            self.services.append_record(call.caller, self.contracts.record(call.caller, used))

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
        """Refuse new runs, then abort and await live ones; then stop the MCP servers nobody else holds."""
        self._closed = True
        for runtime, _ in self._runtimes.values():
            await runtime.aclose()
        await self.mcp.aclose()

    def session(self, agent: AgentRef) -> SessionState | None:
        return self._sessions.get(agent.session_id)

    # -- projections ---------------------------------------------------------------------
    def tools(self, agent: AgentRef) -> list[ToolDefinition]:
        """The session's MCP servers' tools; under code mode also ``run_code``, ``read_spill`` when the
        host lends a spill store (ADR 0069), and the MCP resource readers when a server offers resources
        (ADR 0072). MCP tools are contributed from the session's opening on (before it is held: the plan
        is computed over them)."""
        if self._closed:
            return []
        sources = self.mcp.tools(agent.session_id)
        state = self.session(agent)
        if state is None or not state.ptc:
            return sources
        tools = [self._definition(state.limits)]
        if self.services.spill_store is not None:
            tools.append(read_spill_definition())
        if self._resource_servers_allowed(agent):  # off for every server: no resource selector at all
            tools.extend(self._resource_tools)
        return [*tools, *sources]

    def _resource_servers_allowed(self, agent: AgentRef) -> frozenset[str]:
        """The resource servers ``agent``'s plan lets programs read (none without code mode)."""
        state = self.session(agent)
        if state is None or not state.ptc or state.membership is None:
            return frozenset()
        return state.membership.resources.allowed

    def tool_result(self, call: ToolCall, result: ToolResult) -> ResultAnnotation | None:
        """A top-level result of a code-mode session above the preview budget: a preview and a handle.

        Only where the model sees it (top-level calls) and only when the model can read the rest
        (the host lends a spill store and ``read_spill`` is in the caller's view and membership);
        otherwise the result is left as it is (ADR 0069).
        """
        if call.parent_call_id is not None:
            return None
        state = self.session(call.caller)
        if state is None or not state.ptc or state.membership is None:
            return None
        store = self.services.spill_store
        readable = state.membership.reaches(READ_TOOL_NAME) and any(
            spec.name == READ_TOOL_NAME for spec in self.services.tool_view(call.caller)
        )
        return preview_result(
            result,
            store=store if readable else None,
            counter=choose_counter(self.services.token_counter),
            budget=state.context.preview_tokens,
            lang=MODEL_LANG,
        )

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
        """The plan's message (catalog, refresh notice or withdrawal) while one is owed, then the others.

        A refresh still pending applies here first when no cell of the session
        runs (the step is a safe boundary).
        """
        state = self.session(step.agent)
        if state is None:
            return []
        if state.pending is not None and not self._cells.get(step.agent.session_id):
            state = self.commands.apply_pending(state)
        messages = self._plan_messages(state, step)
        messages += self._contract_messages(self.session(step.agent) or state)
        return messages

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
        if wanted is Shown.CATALOG and environment is not None:
            counter = choose_counter(self.services.token_counter)
            offered = catalog_message(environment, state.catalog, counter, state.presentation)
            if sequence and state.delivery.carries_catalog() and state.delivery.refresh < sequence:
                header = notice_header(sequence, self._seen_diff(state, environment))
                offered = attrs.evolve(offered, text=header + "\n\n" + offered.text)
        else:
            offered = withdrawn_message()
        offer = Offer(shown=wanted, turn=step.turn, step=step.step, refresh=sequence)
        if wanted is Shown.CATALOG:
            self.services.append_record(step.agent, offer_record(offer))
        self._sessions[step.agent.session_id] = attrs.evolve(state, delivery=attrs.evolve(state.delivery, offer=offer))
        return [offered]

    def _seen_diff(self, state: SessionState, environment: Environment) -> PlanDiff:
        """What changed since the catalog the surface carries: the refresh's own diff when the model saw the
        plan just before it, else the diff from the plan of the refresh it last saw (read from the records)."""
        assert environment.refresh is not None
        seen = state.delivery.refresh
        if seen == environment.sequence - 1:
            return environment.refresh.diff
        for record in reversed(self.services.read_records(state.info.agent, KIND)):
            earlier = restore([record]).environment
            if earlier is not None and earlier.sequence == seen:
                return plan_diff(earlier.plan, environment.plan)
        return environment.refresh.diff

    def compaction(self, info: CompactionInfo) -> None:
        """The host compacted the session's surface: what its messages showed and it did not keep is gone.

        The recovery is owed to the next model step (:meth:`_contract_messages`). Whether the catalog
        survived is :func:`~.contract_memory.catalog_kept` of ``info``.
        """
        state = self.session(info.agent)
        if state is None:
            return
        self._remember(info.agent, Compacted(kept=info.kept_provenances))
        hide_compacted_cells(self.services, info)
        if not catalog_kept(info):  # the catalog (or the notice) went with it: owed again at the next step
            self._sessions[info.agent.session_id] = attrs.evolve(state, delivery=dropped(state.delivery))

    def _contract_messages(self, state: SessionState) -> list[ContextMessage]:
        """After the plan's message: the recovery a compaction left owing, then the expansion of what the
        session's programs looked up since the last step, and of old contracts still on the surface that a
        refresh revised (each at most once, within its budget; ADR 0070, ADR 0090)."""
        agent = state.info.agent
        incoming = self.contracts.take(agent)
        snapshot = state.membership.snapshot if state.membership is not None else None
        if not state.ptc or state.environment is None or snapshot is None:
            return []
        counter = choose_counter(self.services.token_counter)
        full = frozenset(e.identity for e in state.environment.with_disclosure(Disclosure.FULL))
        messages: list[ContextMessage] = []
        if (memory := self.contracts.memory(agent)).recovery_due:
            host = host_revisions(self.services, agent, memory.used)
            owed = recovery(memory, snapshot, full, counter, state.context.recovery_tokens, host)
            if owed.event is not None:
                self._remember(agent, owed.event)
            if new := tuple(d for d in owed.diagnostics if d not in state.diagnostics):
                state = attrs.evolve(state, diagnostics=(*state.diagnostics, *new))
                self._sessions[agent.session_id] = state
            messages += [owed.message] if owed.message is not None else []
        # Old contracts still on the surface (a refresh revised them) go again at the revision offered now.
        if incoming := (*superseded(self.contracts.memory(agent), snapshot, full), *incoming):
            offered = expansion(
                self.contracts.memory(agent), incoming, snapshot, full, counter, state.context.discovery_tokens
            )
            if offered.event is not None:
                self._remember(agent, offered.event)
            messages += [offered.message] if offered.message is not None else []
        return messages

    def _remember(self, agent: AgentRef, event: Event) -> None:
        self.services.append_record(agent, self.contracts.record(agent, event))

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
            sequence = state.turned_off.get(spec.name)
            if sequence is not None:
                # A held name (a model's memory, a program's crafted call) after a refresh turned it off.
                reason = message("ptc.guard.off-by-refresh", MODEL_LANG, tool=spec.name, sequence=sequence)
            elif spec.name not in membership.known:
                # Added by the host after the plan froze: not in the plan at all, not "off" in it (ADR 0056).
                reason = message("ptc.guard.not-in-plan", MODEL_LANG, tool=spec.name)
            else:
                reason = message("ptc.guard.off", MODEL_LANG, tool=spec.name)
            return Refusal(code="capability-off", reason=reason)
        if self._parent_refuses(state, spec.name):
            return Refusal(code="capability-off", reason=message("ptc.guard.off-by-parent", MODEL_LANG, tool=spec.name))
        skill = membership.skills.refuses(
            call, self.services.skills(call.caller) if call.tool in membership.skills.arguments else ()
        )
        if skill is not None:
            return Refusal(code="capability-off", reason=message("ptc.guard.off", MODEL_LANG, tool=skill))
        source = membership.resources.refuses(call)
        if source is not None:
            return Refusal(code="capability-off", reason=message("ptc.guard.off", MODEL_LANG, tool=source))
        return None

    def _parent_refuses(self, state: SessionState, name: str) -> bool:
        """Whether an ancestor's plan now keeps ``name`` out: a child's plan stays bounded by its
        parent's after the parent refreshed, without re-planning the child."""
        parent_id = state.info.agent.parent_session_id
        seen: set[str] = set()
        while parent_id is not None and parent_id not in seen:
            seen.add(parent_id)
            parent = self._sessions.get(parent_id)
            if parent is None:
                return False
            membership = parent.membership if parent.ptc else None
            if membership is not None and name in membership.known and not membership.reaches(name):
                return True
            parent_id = parent.info.agent.parent_session_id
        return False

    # -- commands ---------------------------------------------------------------------------
    def command(self, request: CommandRequest) -> CommandReceipt | None:
        """``/capabilities`` and ``/capabilities refresh [--dry-run]`` (:mod:`.commands`)."""
        return self.commands.command(request)

    def refresh(self, agent: AgentRef, *, dry_run: bool = False) -> CommandReceipt:
        """``/capabilities refresh`` for ``agent``'s session (:meth:`.commands.CapabilitiesCommands.refresh`)."""
        return self.commands.refresh(agent, dry_run=dry_run)

    # -- what the commands need (:class:`.commands.PlanHolder`) --------------------------------
    def put(self, state: SessionState) -> None:
        """Hold ``state`` as its session's state now."""
        self._sessions[state.info.agent.session_id] = state

    def hold(self, state: SessionState, skills: Sequence[SkillSpec], membership: Membership | None) -> SessionState:
        return self._hold(state, skills, membership)

    def running(self, session_id: str) -> int:
        """How many ``run_code`` cells of the session run now."""
        return len(self._cells.get(session_id, ()))

    def children(self, session_id: str) -> int:
        """How many sessions this controller holds whose parent is ``session_id``."""
        return sum(1 for s in self._sessions.values() if s.info.agent.parent_session_id == session_id)

    def today(self, info: SessionInfo) -> Today:
        """The facts of now for ``info``, for a refresh: its MCP servers are started to list again (ADR 0097)."""
        return read_today(self.services, info, self.mcp, refresh=True)

    def counter(self) -> TokenCounter:
        return choose_counter(self.services.token_counter)

    def parent_members(self, agent: AgentRef) -> frozenset[str] | None:
        return self._parent_members(agent)

    # -- internals ------------------------------------------------------------------------
    def _counter(self) -> TokenCounter:
        return choose_counter(self.services.token_counter)

    def _definition(self, limits: RunLimits) -> ToolDefinition:
        entry = self._runtimes.get(limits)
        if entry is None:
            runtime = CodeRuntime(limits, owner_paths=(WORKSPACE_DIR,))
            entry = (
                runtime,
                run_code_definition(
                    runtime=runtime,
                    namespace_filter=self._namespace,
                    discovery=self.discovery,
                    expanded=self.contracts.expanded,
                    kernel_for=self._kernel_cell,
                ),
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
        proven = attrs.evolve(state, delivery=Delivery(shown=offer.shown, refresh=offer.refresh))
        self._sessions[state.info.agent.session_id] = proven
        return proven

    def _kernel_cell(self, context: ToolContext) -> KernelCell | None:
        """The kernel cell a ``run_code`` call runs as (``[runtime] kernel = "session"``)."""
        state = self.session(context.call.caller)
        if state is None:
            return session_cell(self.services, context, UserBindings())
        return session_cell(self.services, context, state.bindings, state.turned_off)

    def _namespace(self, agent: AgentRef, view: Sequence[ToolSpec]) -> Sequence[ToolSpec]:
        state = self.session(agent)
        if state is None or state.membership is None:
            return list(view)
        return state.membership.program_view(view)
