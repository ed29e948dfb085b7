"""Step 4 of plan computation: which evidence speaks for one capability.

Sufficient workspace statistics come first, else sufficient user-global
statistics, else the manual baseline. Sufficient statistics *replace*
baseline membership: a baseline capability the workspace rarely uses is not
backed. Statistics only ever back a capability for ``full``; they never
switch anything off.
"""

from __future__ import annotations

import attrs

from ptc_plus.config import StatisticsSection
from ptc_plus.plan.inputs import PlanCandidate, ScopeStats
from ptc_plus.plan.model import Reason, Scope


@attrs.frozen(kw_only=True)
class Evidence:
    """The deciding evidence; ``backed`` means it may fill the budget."""

    reason: Reason
    backed: bool
    coverage: float | None = None
    samples: int | None = None
    scope: Scope | None = None
    baseline_rank: int | None = None


def sufficient(stats: ScopeStats | None, settings: StatisticsSection) -> bool:
    """Enough eligible families to vote: a real denominator of at least ``min_samples``."""
    return stats is not None and stats.coverage is not None and stats.samples >= settings.min_samples


def evidence_for(
    candidate: PlanCandidate,
    *,
    settings: StatisticsSection,
    statistics_vote: bool,
    baseline_rank: int | None,
) -> Evidence:
    """The evidence for ``candidate`` (``statistics_vote`` false: statistics are ignored)."""
    if statistics_vote:
        for scope, reason, stats in (
            (Scope.WORKSPACE, Reason.WORKSPACE_STATISTICS, candidate.workspace),
            (Scope.USER, Reason.USER_STATISTICS, candidate.user),
        ):
            if stats is not None and stats.coverage is not None and sufficient(stats, settings):
                return Evidence(
                    reason=reason,
                    backed=stats.coverage >= settings.threshold,
                    coverage=stats.coverage,
                    samples=stats.samples,
                    scope=scope,
                    baseline_rank=baseline_rank,
                )
    if baseline_rank is not None:
        return Evidence(reason=Reason.BASELINE, backed=True, baseline_rank=baseline_rank)
    return Evidence(reason=Reason.NOT_BACKED, backed=False)
