"""What a session is opened with (start or resume): the facts of now, and the diagnostics they give.

Start computes the plan from these facts; resume keeps its recorded plan and
only re-checks the gate against them (ADR 0053). Either way the config, the
run limits, the host's view and skills, and the gate are read here, once.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from pathlib import Path

import attrs

from hookspecs import AgentRef, HostServices, SessionInfo, SkillSpec, ToolSpec
from ptc_plus.adapters.mcp import RESOURCE_TOOLS, McpSources
from ptc_plus.capabilities import Catalog, build_catalog
from ptc_plus.config import LoadedConfig, UserBindings, load_bindings
from ptc_plus.gate import GateDecision, evaluate_gate
from ptc_plus.i18n import message
from ptc_plus.preview import READ_TOOL_NAME
from ptc_plus.runtime import TOOL_NAME, KernelMode
from ptc_plus.sdk import LearnedResult
from ptc_plus.session.environment import Environment, GateSummary
from ptc_plus.session.session_limits import SessionLimits, config_diagnostics, configured_limits
from ptc_plus.statistics import user_store, workspace_store
from ptc_plus.workflow import OWN_TOOLS as WORKFLOW_TOOLS


@attrs.frozen(kw_only=True)
class Today:
    """The facts of now a session is opened with."""

    loaded: LoadedConfig
    configured: SessionLimits
    skills: Sequence[SkillSpec]
    catalog: Catalog
    decision: GateDecision
    sources: tuple[str, ...] = ()
    """Why configured MCP servers are not used, or some of their tools (ADR 0071, ADR 0072)."""
    bindings: UserBindings = attrs.field(factory=UserBindings)
    """The REPL kernel's user bindings (read only when ``[runtime] kernel = "session"``, ADR 0082)."""

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
        """Every config issue (unusable user bindings included), then why configured run limits were not
        used (if they were not), then the MCP sources' problems."""
        bindings = [message("ptc.report.config-issue", issue=issue.message()) for issue in self.bindings.issues]
        return [*config_diagnostics(self.loaded, self.configured), *bindings, *self.sources]


def host_view(services: HostServices, agent: AgentRef) -> list[ToolSpec]:
    """The host's tools for ``agent``, in host order, without the plugin's own ``run_code``, ``read_spill``
    and MCP resource readers (never capabilities of the plan, ADR 0069, ADR 0072)."""
    return [s for s in services.tool_view(agent) if s.name not in _OWN]


_OWN = frozenset({TOOL_NAME, READ_TOOL_NAME, *RESOURCE_TOOLS, *WORKFLOW_TOOLS})


def host_revisions(services: HostServices, agent: AgentRef, identities: Collection[str]) -> dict[str, str]:
    """The contract revision the host's tools of ``identities`` have now (those it no longer offers are absent).

    Only those tools are rendered (a compaction recovery asks for the few it would re-send), never the catalog.
    """
    wanted = frozenset(identities)
    specs = [s for s in host_view(services, agent) if s.identity in wanted]
    if not specs:
        return {}
    return {c.identity: c.revision for c in build_catalog(tools=specs, cache=None).capabilities}


def learned_shapes(workspace: Path, loaded: LoadedConfig) -> Callable[[str, str], LearnedResult | None] | None:
    """The result shapes learned in ``workspace``'s store, else in the user's (ADR 0102), for the catalog a session
    opens with; ``None`` when ``[statistics]`` is off or ``learn_output_shapes = false``. Read once, when the
    catalog is built (start, resume, refresh): a shape learned meanwhile waits for the next session."""
    settings = loaded.config.statistics
    if loaded.statistics_disabled or not (settings.enabled and settings.learn_output_shapes):
        return None
    views = [view for view in (workspace_store(workspace).read(), user_store().read()) if view.usable]

    def find(identity: str, revision: str) -> LearnedResult | None:
        for view in views:
            found = view.learned(identity, revision)
            if found is not None:
                return LearnedResult(schema=found.shape, results=found.results, since=found.since)
        return None

    return find if views else None


def read_today(
    services: HostServices, info: SessionInfo, mcp: McpSources | None = None, *, refresh: bool = False
) -> Today:
    """Read config and run limits, the host's view and skills, and evaluate the gate, for ``info``.

    With ``mcp``, the session's configured MCP servers are (re)opened first: the catalog holds their
    tools and one resource source per server declaring resources (ADR 0072). Their tools come from each
    definition's ``tools/list`` snapshot; only a server without one is started, and every server (not
    ``off``) with ``refresh`` — a capability refresh lists them again (ADR 0097).
    """
    configured = configured_limits(info.workspace)
    loaded, settings = configured.loaded, configured.gate
    kernel = configured.limits.kernel is KernelMode.SESSION
    bindings = load_bindings(loaded) if kernel else UserBindings()
    session_id = info.agent.session_id
    if mcp is not None:
        mcp.open(session_id, loaded, info.workspace, refresh=refresh)
    view = host_view(services, info.agent)
    if mcp is not None:
        view = mcp.settle(session_id, view)
    skills = services.skills(info.agent)
    decision = evaluate_gate(
        settings, user_id=info.user_id, toolsets=sorted({s.source for s in view}), title=info.title
    )
    return Today(
        loaded=loaded,
        configured=configured.session,
        skills=skills,
        catalog=build_catalog(
            tools=view,
            skills=skills,
            resources=mcp.resource_sources(session_id) if mcp is not None else (),
            learned=learned_shapes(info.workspace, loaded),
        ),
        decision=decision,
        bindings=bindings,
        sources=mcp.diagnostics(session_id) if mcp is not None else (),
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
