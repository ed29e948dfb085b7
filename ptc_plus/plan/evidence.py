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


Decision = tuple[Reason, bool, float | None, int | None, Scope | None, int | None, int | None, tuple[Shortfall, ...]]
"""An :class:`Evidence` as a plain tuple, in its field order (``reason``, ``backed``, ``coverage``, ``samples``,
``scope``, ``baseline_rank``, ``window``, ``passed_over``): plan computation makes one per candidate, and a tuple
costs a sixth of a frozen instance, which a plan of 10,000 capabilities notices."""


class EvidenceRule:
    """Step 4 for every candidate of one plan: :func:`evidence_for` with the plan's settings bound once.

    Plans of 10,000 capabilities call it 10,000 times, so it shares what
    repeats: the settings' values, one :class:`Shortfall` per (scope,
    samples) and one decision per baseline rank without statistics.
    """

    def __init__(self, *, settings: StatisticsSection, statistics_vote: bool, user_vote: bool = True) -> None:
        self._vote = statistics_vote
        self._user = statistics_vote and user_vote
        self._window = settings.window if statistics_vote else None
        self._min = settings.min_samples
        self._threshold = settings.threshold
        self._shortfalls: dict[tuple[Scope, int], Shortfall] = {}
        self._plain: dict[tuple[int | None, tuple[Shortfall, ...]], Decision] = {}

    def _shortfall(self, scope: Scope, stats: ScopeStats | None) -> Shortfall:
        samples = stats.samples if stats is not None and stats.coverage is not None else 0
        found = self._shortfalls.get((scope, samples))
        if found is None:
            found = self._shortfalls[scope, samples] = Shortfall(scope=scope, samples=samples, min_samples=self._min)
        return found

    def __call__(self, candidate: PlanCandidate, baseline_rank: int | None) -> Evidence:
        (reason, backed, coverage, samples, scope, rank, window, passed) = self.decide(candidate, baseline_rank)
        return Evidence(
            reason=reason,
            backed=backed,
            coverage=coverage,
            samples=samples,
            scope=scope,
            baseline_rank=rank,
            window=window,
            passed_over=passed,
        )

    def decide(self, candidate: PlanCandidate, baseline_rank: int | None) -> Decision:
        """What :meth:`__call__` returns, as a :data:`Decision` tuple."""
        if not self._vote:
            return self._fallback(baseline_rank, ())
        workspace = candidate.workspace
        if workspace is not None and (coverage := workspace.coverage) is not None and workspace.samples >= self._min:
            return (
                Reason.WORKSPACE_STATISTICS,
                coverage >= self._threshold,
                coverage,
                workspace.samples,
                Scope.WORKSPACE,
                baseline_rank,
                self._window,
                (),
            )
        passed: tuple[Shortfall, ...] = (self._shortfall(Scope.WORKSPACE, workspace),)
        if self._user:
            user = candidate.user
            if user is not None and (coverage := user.coverage) is not None and user.samples >= self._min:
                return (
                    Reason.USER_STATISTICS,
                    coverage >= self._threshold,
                    coverage,
                    user.samples,
                    Scope.USER,
                    baseline_rank,
                    self._window,
                    passed,
                )
            passed = (*passed, self._shortfall(Scope.USER, user))
        return self._fallback(baseline_rank, passed)

    def _fallback(self, rank: int | None, passed: tuple[Shortfall, ...]) -> Decision:
        # Shortfalls are shared per (scope, samples), so the causes repeat: a few keys for a whole plan.
        found = self._plain.get((rank, passed))
        if found is None:
            if rank is not None:
                found = (Reason.BASELINE, True, None, None, None, rank, self._window, passed)
            else:
                found = (Reason.NOT_BACKED, False, None, None, None, None, self._window, passed)
            self._plain[rank, passed] = found
        return found


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
