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
from ptc_plus.plan.model import Reason, Scope, Shortfall


@attrs.frozen(kw_only=True)
class Evidence:
    """The deciding evidence; ``backed`` means it may fill the budget.

    ``window`` is the statistics window when statistics had a vote (``None``
    otherwise); ``passed_over`` the scopes looked at first that had too few
    samples to decide.
    """

    reason: Reason
    backed: bool
    coverage: float | None = None
    samples: int | None = None
    scope: Scope | None = None
    baseline_rank: int | None = None
    window: int | None = None
    passed_over: tuple[Shortfall, ...] = ()


def sufficient(stats: ScopeStats | None, settings: StatisticsSection) -> bool:
    """Enough eligible families to vote: a real denominator of at least ``min_samples``."""
    return stats is not None and stats.coverage is not None and stats.samples >= settings.min_samples


class EvidenceRule:
    """Step 4 for every candidate of one plan: :func:`evidence_for` with the plan's settings bound once.

    Plans of 10,000 capabilities call it 10,000 times, so it shares what
    repeats: the settings' values, one :class:`Shortfall` per (scope,
    samples) and one evidence per baseline rank without statistics.
    """

    def __init__(self, *, settings: StatisticsSection, statistics_vote: bool, user_vote: bool = True) -> None:
        self._vote = statistics_vote
        self._user = statistics_vote and user_vote
        self._window = settings.window if statistics_vote else None
        self._min = settings.min_samples
        self._threshold = settings.threshold
        self._shortfalls: dict[tuple[Scope, int], Shortfall] = {}
        self._plain: dict[int | None, Evidence] = {}

    def _shortfall(self, scope: Scope, stats: ScopeStats | None) -> Shortfall:
        samples = stats.samples if stats is not None and stats.coverage is not None else 0
        found = self._shortfalls.get((scope, samples))
        if found is None:
            found = self._shortfalls[scope, samples] = Shortfall(scope=scope, samples=samples, min_samples=self._min)
        return found

    def _decides(self, stats: ScopeStats | None) -> bool:
        return stats is not None and stats.coverage is not None and stats.samples >= self._min

    def __call__(self, candidate: PlanCandidate, baseline_rank: int | None) -> Evidence:
        if not self._vote:
            found = self._plain.get(baseline_rank)
            if found is None:
                found = self._plain[baseline_rank] = _fallback(baseline_rank, None, ())
            return found
        workspace = candidate.workspace
        if workspace is not None and workspace.coverage is not None and workspace.samples >= self._min:
            return self._statistics(Reason.WORKSPACE_STATISTICS, Scope.WORKSPACE, workspace, baseline_rank, ())
        passed: tuple[Shortfall, ...] = (self._shortfall(Scope.WORKSPACE, workspace),)
        if self._user:
            user = candidate.user
            if user is not None and user.coverage is not None and user.samples >= self._min:
                return self._statistics(Reason.USER_STATISTICS, Scope.USER, user, baseline_rank, passed)
            passed = (*passed, self._shortfall(Scope.USER, user))
        return _fallback(baseline_rank, self._window, passed)

    def _statistics(
        self, reason: Reason, scope: Scope, stats: ScopeStats, rank: int | None, passed: tuple[Shortfall, ...]
    ) -> Evidence:
        coverage = stats.coverage if stats.coverage is not None else 0.0
        return Evidence(
            reason=reason,
            backed=coverage >= self._threshold,
            coverage=coverage,
            samples=stats.samples,
            scope=scope,
            baseline_rank=rank,
            window=self._window,
            passed_over=passed,
        )


def _fallback(rank: int | None, window: int | None, passed: tuple[Shortfall, ...]) -> Evidence:
    if rank is not None:
        return Evidence(reason=Reason.BASELINE, backed=True, baseline_rank=rank, window=window, passed_over=passed)
    return Evidence(reason=Reason.NOT_BACKED, backed=False, window=window, passed_over=passed)


def evidence_for(
    candidate: PlanCandidate,
    *,
    settings: StatisticsSection,
    statistics_vote: bool,
    baseline_rank: int | None,
    user_vote: bool = True,
) -> Evidence:
    """The evidence for ``candidate`` (``statistics_vote`` false: statistics are ignored; ``user_vote``
    false: the user-global fallback is, e.g. because its store could not be read)."""
    rule = EvidenceRule(settings=settings, statistics_vote=statistics_vote, user_vote=user_vote)
    return rule(candidate, baseline_rank)
