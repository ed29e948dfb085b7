"""The plan a new session gets, computed from the host's catalog by :func:`ptc_plus.plan.compute_plan`.

Every managed capability becomes a :class:`~ptc_plus.plan.PlanCandidate`
with its contract's measured cost; the budget counts the delivery of the
``full`` set together, so a type shared by several tools is charged once
(:func:`delivery_cost`). With management off (the default, SPEC §4) the
plan is the host's own provision: everything ``full``, reason
``management-off``. There is no statistics store yet, so statistics never
vote: the plan says ``unavailable`` (or ``disabled``), never a guess.
"""

from __future__ import annotations

from collections.abc import Sequence

from hookspecs import TokenCounter
from ptc_plus.capabilities import Catalog, delivery_text
from ptc_plus.config import LoadedConfig
from ptc_plus.plan import CapabilityPlan, DeliveryCost, PlanCandidate, PlanInput, StatisticsVote, compute_plan

STATISTICS_VOTE = StatisticsVote.UNAVAILABLE
"""What statistics say in new plans until a statistics store exists (ADR 0037)."""


def candidates(catalog: Catalog, counter: TokenCounter) -> list[PlanCandidate]:
    """The managed capabilities of ``catalog`` as plan candidates, each with its measured contract cost."""
    return [
        PlanCandidate(
            identity=c.identity,
            cost_tokens=counter.count(c.contract),
            name=c.name,
            kind=c.kind.value,
            revision=c.revision,
        )
        for c in catalog.managed()
    ]


def delivery_cost(catalog: Catalog, counter: TokenCounter) -> DeliveryCost:
    """Measured tokens of delivering identities together (shared types once), cached per set."""
    cache: dict[frozenset[str], int] = {}

    def cost(identities: Sequence[str]) -> int:
        key = frozenset(identities)
        found = cache.get(key)
        if found is None:
            capabilities = [c for i in sorted(key) if (c := catalog.get(i)) is not None]
            found = cache[key] = counter.count(delivery_text(capabilities)) if capabilities else 0
        return found

    return cost


def session_plan(
    catalog: Catalog,
    loaded: LoadedConfig,
    counter: TokenCounter,
    *,
    statistics: StatisticsVote = STATISTICS_VOTE,
    parent_members: frozenset[str] | None = None,
) -> CapabilityPlan:
    """The plan for one agent over ``catalog`` (its host scope), from the effective config.

    The model's real context size comes from ``[management] context_tokens``
    when the user states it; the host contract reports none (ADR 0047).
    """
    return compute_plan(
        PlanInput(
            candidates=candidates(catalog, counter),
            config=loaded.config,
            config_revision=loaded.revision,
            # A config problem switched statistics off: say so, not "disabled by the config".
            statistics=StatisticsVote.INVALID if loaded.statistics_disabled else statistics,
            parent_members=parent_members,
            context_tokens=loaded.config.management.context_tokens,
            delivery_cost=delivery_cost(catalog, counter),
        )
    )
