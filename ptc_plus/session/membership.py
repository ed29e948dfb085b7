"""Runtime membership from the one plan: what programs and discovery may see.

``off`` members, and members outside the plan (for example outside a parent
agent's scope), are absent — from the program's ``tools`` namespace, from
discovery and from the catalog message — never callable placeholders that
refuse. ``on-demand`` members stay in both. A session without an
environment keeps the host's own view untouched.
"""

from __future__ import annotations

from collections.abc import Sequence

from hookspecs import TokenCounter, ToolSpec
from ptc_plus.capabilities.catalog import CapabilityKind, Catalog
from ptc_plus.capabilities.snapshot import CatalogSnapshot, build_snapshot
from ptc_plus.config import Disclosure
from ptc_plus.plan import CapabilityPlan
from ptc_plus.session.environment import Environment

_TOOL_KINDS = frozenset({CapabilityKind.TOOL.value, CapabilityKind.MCP_TOOL.value})
_SKILL_KINDS = frozenset({CapabilityKind.SKILL.value})


def _excluded(environment: Environment, kinds: frozenset[str]) -> frozenset[str]:
    effective = {e.identity for e in environment.plan.effective()}
    return frozenset(
        e.name for e in environment.plan.entries if e.kind in kinds and e.name and e.identity not in effective
    )


def excluded_tools(environment: Environment) -> frozenset[str]:
    """Tool names programs must not reach: ``off`` and not in the plan."""
    return _excluded(environment, _TOOL_KINDS)


def excluded_skills(environment: Environment) -> frozenset[str]:
    """Skill names absent from this session's catalog."""
    return _excluded(environment, _SKILL_KINDS)


def full_tools(environment: Environment) -> frozenset[str]:
    """Tool names the plan marks ``full``: under presentation ``both`` the model may also call them directly."""
    return frozenset(e.name for e in environment.with_disclosure(Disclosure.FULL) if e.kind in _TOOL_KINDS and e.name)


def program_view(environment: Environment | None, view: Sequence[ToolSpec]) -> list[ToolSpec]:
    """The program's ``tools`` namespace: the caller's view minus excluded tools."""
    if environment is None:
        return list(view)
    excluded = excluded_tools(environment)
    return [spec for spec in view if spec.name not in excluded]


def effective_snapshot(plan: CapabilityPlan, catalog: Catalog, counter: TokenCounter) -> CatalogSnapshot:
    """``catalog`` restricted to ``plan``'s effective set: ``off`` and not-in-plan members are absent."""
    return build_snapshot(catalog, counter=counter).restrict(e.identity for e in plan.effective())


def discovery_snapshot(environment: Environment, catalog: Catalog, counter: TokenCounter) -> CatalogSnapshot:
    """What ``capabilities.search``/``find``/``inspect``/``tree`` answer from: the plan's effective set."""
    return effective_snapshot(environment.plan, catalog, counter)
