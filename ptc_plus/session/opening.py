"""What a session is opened with (start or resume): the facts of now, and the diagnostics they give.

Start computes the plan from these facts; resume keeps its recorded plan and
only re-checks the gate against them (ADR 0053). Either way the config, the
run limits, the host's view and skills, and the gate are read here, once.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from hookspecs import AgentRef, HostServices, SessionInfo, SkillSpec, ToolSpec
from ptc_plus.capabilities import Catalog, build_catalog
from ptc_plus.config import LoadedConfig
from ptc_plus.gate import GateDecision, evaluate_gate
from ptc_plus.i18n import message
from ptc_plus.preview import READ_TOOL_NAME
from ptc_plus.runtime import TOOL_NAME
from ptc_plus.session.environment import Environment, GateSummary
from ptc_plus.session.session_limits import SessionLimits, config_diagnostics, configured_limits


@attrs.frozen(kw_only=True)
class Today:
    """The facts of now a session is opened with."""

    loaded: LoadedConfig
    configured: SessionLimits
    skills: Sequence[SkillSpec]
    catalog: Catalog
    decision: GateDecision

    @property
    def gate(self) -> GateSummary:
        decision = self.decision
        return GateSummary(
            enabled=decision.enabled,
            stage=str(decision.stage),
            reason=decision.reason,
            debug_run=decision.debug_run,
            warnings=tuple(w.render("en") for w in decision.warnings),
        )

    def diagnostics(self) -> list[str]:
        """Every config issue, then why configured run limits were not used (if they were not)."""
        return config_diagnostics(self.loaded, self.configured)


def host_view(services: HostServices, agent: AgentRef) -> list[ToolSpec]:
    """The host's tools for ``agent``, in host order, without the plugin's own ``run_code`` and ``read_spill``
    (never capabilities of the plan, ADR 0069)."""
    return [s for s in services.tool_view(agent) if s.name not in (TOOL_NAME, READ_TOOL_NAME)]


def read_today(services: HostServices, info: SessionInfo) -> Today:
    """Read config and run limits, the host's view and skills, and evaluate the gate, for ``info``."""
    configured = configured_limits(info.workspace)
    loaded, settings = configured.loaded, configured.gate
    view = host_view(services, info.agent)
    skills = services.skills(info.agent)
    decision = evaluate_gate(
        settings, user_id=info.user_id, toolsets=sorted({s.source for s in view}), title=info.title
    )
    return Today(
        loaded=loaded,
        configured=configured.session,
        skills=skills,
        catalog=build_catalog(tools=view, skills=skills),
        decision=decision,
    )


def host_drift(environment: Environment, catalog: Catalog) -> list[str]:
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
