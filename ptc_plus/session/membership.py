"""Runtime membership from the one plan: what programs and discovery may see.

``off`` members, and members outside the plan (for example outside a parent
agent's scope), are absent — from the program's ``tools`` namespace, from
discovery and from the catalog message — never callable placeholders that
refuse. ``on-demand`` members stay in both. A session without an
environment keeps the host's own view untouched.

:class:`Membership` is that decision as one value, frozen when the
environment is created or restored and held in the session state: the
guard, the natively offered tools, the program's ``tools`` namespace,
discovery and ``/capabilities`` read it and never re-derive it. A managed
tool the host adds after it froze is outside the plan, and so absent from
every projection until a refresh (ADR 0056).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import attrs

from hookspecs import SkillSpec, TokenCounter, ToolCall, ToolSpec
from ptc_plus.adapters.mcp import RESOURCE_TOOLS
from ptc_plus.capabilities import KINDS, CapabilityKind, Catalog, Reach, kinds_reached
from ptc_plus.config import Disclosure
from ptc_plus.discovery import DEFAULT_DISCOVERY_BUDGET, CatalogSnapshot, build_snapshot
from ptc_plus.plan import CapabilityPlan, Scope
from ptc_plus.preview import READ_TOOL_NAME
from ptc_plus.runtime import TOOL_NAME
from ptc_plus.session.environment import Environment
from ptc_plus.workflow import OWN_TOOLS as WORKFLOW_TOOLS

_TOOL_KINDS = kinds_reached(Reach.TOOL_NAME)
"""Kinds reached by tool name: the guard, the natively offered tools and the program's namespace know them."""
_SKILL_KINDS = kinds_reached(Reach.LOADER)
_RESOURCE_KINDS = kinds_reached(Reach.RESOURCE_READER)


def full_tools(environment: Environment) -> frozenset[str]:
    """Tool names the plan marks ``full``: under presentation ``both`` the model may also call them directly."""
    return frozenset(e.name for e in environment.with_disclosure(Disclosure.FULL) if e.kind in _TOOL_KINDS and e.name)


def effective_snapshot(plan: CapabilityPlan, catalog: Catalog, counter: TokenCounter) -> CatalogSnapshot:
    """``catalog`` restricted to ``plan``'s effective set: ``off`` and not-in-plan members are absent."""
    snapshot = build_snapshot(catalog, counter=counter, usage=workspace_usage(plan))
    return snapshot.restrict(e.identity for e in plan.effective())


def workspace_usage(plan: CapabilityPlan) -> dict[str, int]:
    """How many of the workspace's session families used each member the workspace's statistics decided
    (``coverage`` × ``samples`` of its plan entry): identities and counts only, the prior between a search's
    near ties (ADR 0111). Members the statistics had no vote on, or decided from the user's scope, are absent."""
    return {
        e.identity: used
        for e in plan.entries
        if e.scope is Scope.WORKSPACE
        and e.coverage is not None
        and e.samples
        and (used := round(e.coverage * e.samples))
    }


@attrs.frozen(kw_only=True)
class SkillLoads:
    """Which skill bodies may load: by loader tool (a host fact, :attr:`SkillSpec.loader`)."""

    arguments: Mapping[str, str] = attrs.field(factory=dict)
    """Loader tool name -> the argument carrying the skill's name."""
    known: frozenset[tuple[str, str]] = frozenset()
    """``(loader, skill)`` pairs the plan saw."""
    allowed: frozenset[tuple[str, str]] = frozenset()
    """``(loader, skill)`` pairs in the plan's effective set."""

    def refuses(self, call: ToolCall, current: Sequence[SkillSpec]) -> str | None:
        """The skill ``call`` would load if the plan keeps it out (``off``, not in plan, or added later)."""
        argument = self.arguments.get(call.tool)
        if argument is None:
            return None
        skill = str(call.arguments.get(argument))
        pair = (call.tool, skill)
        if pair in self.allowed:
            return None
        if pair in self.known or any(s.name == skill and s.loader == call.tool for s in current):
            return skill
        return None  # not a skill at all: the host answers ``unknown-skill`` itself


@attrs.frozen(kw_only=True)
class ResourceReads:
    """Which MCP servers' resources programs may read: the plan's ``mcp-resources:<server>`` entries."""

    known: frozenset[str] = frozenset()
    """Servers whose resource source the plan saw."""
    allowed: frozenset[str] = frozenset()
    """Servers whose resource source is in the plan's effective set."""

    def refuses(self, call: ToolCall) -> str | None:
        """The resource source ``call`` would read if the plan keeps it out (``off``, or added later).

        A call naming no server is never refused here: the reader then looks only at ``allowed``.
        """
        if call.tool not in RESOURCE_TOOLS or call.arguments.get("server") is None:
            return None
        server = str(call.arguments["server"])
        return None if server in self.allowed else KINDS[CapabilityKind.MCP_RESOURCES].prefix + server


@attrs.frozen(kw_only=True)
class Membership:
    """Who belongs to a session under code mode, frozen once (environment created or restored).

    :ivar known: every tool name the value decided on: the plan's managed tools, the
        unmanaged tools of the view it froze over, and the plugin's own ``run_code`` and ``read_spill``.
    :ivar reachable: tool names a program or the model may reach (the guard's one lookup).
    :ivar native: tool names offered to the model as its own function tools.
    :ivar direct: under ``both``, the plan's ``full`` tools (also in ``native``).
    :ivar skills: which skill bodies may load.
    :ivar resources: which MCP servers' resources programs may read.
    :ivar snapshot: what discovery answers from: the plan's effective set, its contract costs
        taken from the plan entries, its index built once (``None`` when code mode is not in force).
    """

    known: frozenset[str]
    reachable: frozenset[str]
    native: frozenset[str]
    direct: frozenset[str] = frozenset()
    skills: SkillLoads = attrs.field(factory=SkillLoads)
    resources: ResourceReads = attrs.field(factory=ResourceReads)
    snapshot: CatalogSnapshot | None = attrs.field(default=None, eq=False)

    def reaches(self, name: str) -> bool:
        return name in self.reachable

    def late(self, view: Sequence[ToolSpec]) -> list[str]:
        """Tools of ``view`` the host added after the value froze, in host order (ADR 0056)."""
        return [s.name for s in view if s.name not in self.known]

    def program_view(self, view: Sequence[ToolSpec]) -> list[ToolSpec]:
        """The program's ``tools`` namespace: the caller's view, reachable members only."""
        return [s for s in view if s.name in self.reachable]

    def native_tools(self, view: Sequence[ToolSpec]) -> list[str]:
        """Tools offered natively, in host order: ``run_code``, unmanaged tools and ``direct`` ones."""
        return [s.name for s in view if s.name in self.native]


def freeze_membership(
    environment: Environment,
    catalog: Catalog,
    skills: Sequence[SkillSpec],
    counter: TokenCounter,
    *,
    direct: bool,
    code_mode: bool,
    discovery_budget: int = DEFAULT_DISCOVERY_BUDGET,
) -> Membership:
    """The one membership value of a session; ``start`` and ``resume`` both build it here.

    :param catalog: the host's catalog now (at start: what the plan was computed over).
    :param skills: the host's skills now, for their loaders.
    :param direct: presentation ``both``: the plan's ``full`` tools are also offered natively.
    :param code_mode: code mode is in force; only then is the discovery index built.
    :param discovery_budget: tokens of a discovery answer that names no budget (``[context] discovery_tokens``).
    """
    plan = environment.plan
    effective = frozenset(e.identity for e in plan.effective())
    managed = frozenset(e.name for e in plan.entries if e.kind in _TOOL_KINDS and e.name)
    allowed = frozenset(e.name for e in plan.effective() if e.kind in _TOOL_KINDS and e.name)
    # The plugin's own tools: run_code, read_spill (reading previewed results, ADR 0069) and the MCP
    # resource readers (ADR 0072: the guard refuses servers the plan keeps out, by argument).
    own = frozenset({TOOL_NAME, READ_TOOL_NAME, *RESOURCE_TOOLS, *WORKFLOW_TOOLS})
    unmanaged = frozenset(c.name for c in catalog.unmanaged() if c.kind in _TOOL_KINDS) | own
    full = full_tools(environment) if direct else frozenset()
    plan_skills = {e.name: e.identity in effective for e in plan.entries if e.kind in _SKILL_KINDS and e.name}
    loads = SkillLoads(
        arguments={s.loader: s.loader_argument for s in skills},
        known=frozenset((s.loader, s.name) for s in skills if s.name in plan_skills),
        allowed=frozenset((s.loader, s.name) for s in skills if plan_skills.get(s.name)),
    )
    sources = {
        KINDS[e.kind].member(e.identity): e.identity in effective
        for e in plan.entries
        if e.kind is not None and e.kind in _RESOURCE_KINDS
    }
    reads = ResourceReads(known=frozenset(sources), allowed=frozenset(s for s, on in sources.items() if on))
    snapshot = None
    if code_mode:
        same_unit = counter.unit == environment.token_unit
        measured = {
            e.identity: e.cost_tokens
            for e in plan.effective()
            if same_unit and (c := catalog.get(e.identity)) is not None and c.revision == e.revision
        }
        snapshot = build_snapshot(
            catalog.restrict(effective),
            counter=counter,
            measured=measured,
            default_budget=discovery_budget,
            usage=workspace_usage(plan),
        )
    return Membership(
        known=managed | unmanaged,
        reachable=allowed | unmanaged,
        native=(unmanaged - managed) | own | full,
        direct=full,
        skills=loads,
        resources=reads,
        snapshot=snapshot,
    )
