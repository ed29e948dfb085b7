"""Opening a session: start computes its plan once, resume restores it; both hold it through one path.

Session start computes the environment once (gate, runtime readiness,
catalog, the capability plan) from the facts of now (:mod:`.opening`) and
persists it; resume restores it from the record and never recomputes the
plan. The gate and the sandbox, though, are facts of today: resume checks
both again, and a session whose gate is now closed or whose sandbox is now
missing is presented natively, saying why (ADR 0053). Start, resume and an
applied refresh all hold the state through :meth:`Opener.hold`, which freezes
the session's view (:mod:`.view`) and tells the usage ledger what its agent
has available. A child agent's plan is computed in its own scope, bounded
by its parent's plan.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from hookspecs import HostServices, SessionInfo, SkillSpec, TokenCounter
from ptc_plus.adapters.mcp import McpSources
from ptc_plus.capabilities import choose_counter
from ptc_plus.i18n import message
from ptc_plus.session.contract_memory import ContractDesk
from ptc_plus.session.delivery import delivery_from
from ptc_plus.session.environment import RestoreStatus, restore
from ptc_plus.session.opening import Today, host_drift, read_today
from ptc_plus.session.presentation import Checked, decide, unproven
from ptc_plus.session.readiness import sandbox_readiness
from ptc_plus.session.refresh import opening_environment
from ptc_plus.session.report import turned_off_from
from ptc_plus.session.state import SessionState
from ptc_plus.session.table import SessionTable
from ptc_plus.session.usage import UsageLedger
from ptc_plus.session.view import FrozenView, freeze_view


class Opener:
    """Start and resume of one controller's sessions, and the one path every state is held through."""

    def __init__(
        self,
        services: HostServices,
        table: SessionTable,
        mcp: McpSources,
        usage: UsageLedger,
        contracts: ContractDesk,
    ) -> None:
        self._services = services
        self._table = table
        self._mcp = mcp
        self._usage = usage
        self._contracts = contracts

    @property
    def counter(self) -> TokenCounter:
        return choose_counter(self._services.token_counter)

    def start(self, info: SessionInfo) -> SessionState:
        """Compute the session's plan once, persist it as its environment record, and hold it."""
        today = read_today(self._services, info, self._mcp)
        parent = self._table.parent_members(info.agent)
        environment, presented = opening_environment(today, info, self.counter, parent)
        self._services.append_record(info.agent, environment.to_record())
        return self.hold(SessionState.opened(info, today, environment, presented), today.skills)

    def resume(self, info: SessionInfo) -> SessionState:
        """Restore the environment from the session's record; never recompute the plan.

        The configured presentation is frozen with the plan; the gate and the
        sandbox are checked again now, since either may have changed while
        the session was closed (kill switch, rollout, another machine).
        """
        records = self._services.read_records(info.agent)
        restored = restore(records)
        today = read_today(self._services, info, self._mcp)
        diagnostics = today.diagnostics()
        if restored.status is not RestoreStatus.RESTORED:
            diagnostics.append(message(f"ptc.restore.{restored.status.value}", detail=restored.detail))
        environment = restored.environment
        gate_warnings: tuple[str, ...] = ()
        if environment is None:
            presented = unproven(restored.status.value)
        else:
            diagnostics.extend(host_drift(environment, today.catalog))
            gate_warnings = today.gate.warnings
            limits = today.configured.limits
            presented = decide(
                environment.presentation, today.decision, lambda: sandbox_readiness(limits), checked=Checked.RESUME
            )
        state = SessionState.opened(
            info,
            today,
            environment,
            presented,
            diagnostics=diagnostics,
            gate_warnings=gate_warnings,
            delivery=delivery_from(records),
            turned_off=turned_off_from(records),
        )
        self._usage.restore(info, records)
        self._contracts.restore(info.agent, records)
        return self.hold(state, today.skills)

    def hold(self, state: SessionState, skills: Sequence[SkillSpec], view: FrozenView | None = None) -> SessionState:
        """Freeze the session's view (a refresh brings the one it validated) and hold the state."""
        if view is None and state.environment is not None:
            view = freeze_view(
                state.environment,
                state.catalog,
                skills,
                self.counter,
                presentation=state.presentation,
                code_mode=state.ptc,
                context=state.context,
            )
        held = self._table.put(attrs.evolve(state, view=view))
        self._usage.hold(held, skills)
        return held

    def today(self, info: SessionInfo) -> Today:
        """The facts of now for ``info``, for a refresh: its MCP servers are started to list again (ADR 0097)."""
        return read_today(self._services, info, self._mcp, refresh=True)
