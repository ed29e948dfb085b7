"""What a plan records about the statistics behind each choice, and how its reasons read (issue 11, item 4)."""

from __future__ import annotations

from typing import Any

from ptc_plus.config import Disclosure, ManagementSection, PtcConfig, StatisticsSection
from ptc_plus.plan import (
    PlanCandidate,
    PlanInput,
    Reason,
    Scope,
    ScopeStats,
    StatisticsVote,
    compute_plan,
    plan_from_json,
    plan_to_json,
    reason_text,
)
from ptc_plus.plan.model import Shortfall

FULL, ON_DEMAND = Disclosure.FULL, Disclosure.ON_DEMAND
SETTINGS = StatisticsSection(window=12, min_samples=4, threshold=0.5)


def plan(
    candidates: list[PlanCandidate], vote: StatisticsVote = StatisticsVote.USABLE, *, budget: int = 30, **kwargs: Any
) -> Any:
    """``budget`` holds the backed members of these tests but never their whole catalog, so evidence decides
    (a catalog that fits whole is all ``full`` with reason ``fits-budget``, ADR 0080)."""
    config = PtcConfig(
        management=ManagementSection(enabled=True, budget_tokens=budget, baseline=("host:base",)), statistics=SETTINGS
    )
    return compute_plan(
        PlanInput(candidates=candidates, config=config, config_revision="sha256:t", statistics=vote, **kwargs)
    )


def cap(identity: str, workspace: ScopeStats | None = None, user: ScopeStats | None = None) -> PlanCandidate:
    return PlanCandidate(identity=identity, cost_tokens=10, workspace=workspace, user=user)


def test_every_reason_names_scope_samples_window_coverage_and_fallback_cause() -> None:
    result = plan(
        [
            cap("host:ws", workspace=ScopeStats(coverage=0.75, samples=8)),
            cap("host:user", workspace=ScopeStats(coverage=1.0, samples=2), user=ScopeStats(coverage=0.6, samples=5)),
            cap("host:low", workspace=ScopeStats(coverage=0.25, samples=4)),
            cap("host:base", user=ScopeStats(coverage=None, samples=0)),
            cap("host:none", workspace=ScopeStats(coverage=1.0, samples=3), user=ScopeStats(coverage=0.5, samples=1)),
        ]
    )
    texts = {e.identity: reason_text(e, "en") for e in result.entries}
    assert texts == {
        "host:ws": "workspace statistics: used in 6 of 8 families (75%), window 12",
        "host:user": (
            "user-global statistics: used in 3 of 5 families (60%), window 12 "
            "(fallback: workspace has 2 of the 4 samples needed)"
        ),
        "host:low": (
            "workspace statistics: used in 1 of 4 families (25%), window 12: coverage below the threshold for full"
        ),
        "host:base": (
            "in the manual baseline (rank 1); statistics could not decide (window 12): "
            "workspace has no sample; user-global has no sample"
        ),
        "host:none": (
            "no sufficient statistics and not in the baseline; statistics could not decide (window 12): "
            "workspace has 3 of the 4 samples needed; user-global has 1 of the 4 samples needed"
        ),
    }
    for entry in result.entries:  # the Chinese reasons carry the same numbers
        assert str(entry.window) in reason_text(entry, "zh") or entry.window is None


def test_a_backed_capability_over_budget_keeps_its_evidence() -> None:
    config = PtcConfig(management=ManagementSection(enabled=True, budget_tokens=5), statistics=SETTINGS)
    result = compute_plan(
        PlanInput(
            candidates=[cap("host:ws", workspace=ScopeStats(coverage=1.0, samples=4))],
            config=config,
            config_revision="sha256:t",
        )
    )
    (entry,) = result.entries
    assert (entry.disclosure, entry.reason, entry.scope, entry.window) == (
        ON_DEMAND,
        Reason.BUDGET_EXHAUSTED,
        Scope.WORKSPACE,
        12,
    )
    assert reason_text(entry, "en") == (
        "workspace statistics: used in 4 of 4 families (100%), window 12, "
        "but its contract did not fit the remaining budget"
    )


def test_workspace_only_ignores_the_user_fallback() -> None:
    candidates = [
        cap("host:user", workspace=ScopeStats(coverage=None, samples=0), user=ScopeStats(coverage=1.0, samples=9)),
        cap("host:none"),
    ]
    usable = plan(candidates, budget=15).entry("host:user")
    assert usable is not None and (usable.disclosure, usable.reason) == (FULL, Reason.USER_STATISTICS)
    damaged = plan(candidates, StatisticsVote.WORKSPACE_ONLY, budget=15, statistics_detail="PTC-5002: damaged")
    entry = damaged.entry("host:user")
    assert damaged.statistics == "workspace-only" and damaged.statistics_detail == "PTC-5002: damaged"
    assert entry is not None and (entry.disclosure, entry.reason) == (ON_DEMAND, Reason.NOT_BACKED)
    assert entry.passed_over == (Shortfall(scope=Scope.WORKSPACE, samples=0, min_samples=4),)


def test_without_a_vote_no_statistics_are_recorded_or_named_per_entry() -> None:
    result = plan(
        [cap("host:base", workspace=ScopeStats(coverage=1.0, samples=9)), cap("host:none")],
        StatisticsVote.CORRUPT,
        budget=15,
    )
    entry = result.entry("host:base")
    assert result.statistics == "corrupt"  # said once, in the plan's summary
    assert entry is not None and entry.window is None and entry.passed_over == () and entry.coverage is None
    assert reason_text(entry, "en") == "in the manual baseline (rank 1)"


def test_the_new_fields_round_trip_and_a_record_without_them_still_reads() -> None:
    result = plan(
        [cap("host:user", workspace=ScopeStats(coverage=1.0, samples=2), user=ScopeStats(coverage=1.0, samples=6))],
        statistics_detail="PTC-5003: newer",
    )
    assert plan_from_json(plan_to_json(result)) == result
    older = plan_to_json(result)
    del older["statistics_detail"]
    for entry in older["entries"]:
        del entry["window"], entry["passed_over"]
    restored = plan_from_json(older)
    assert restored.statistics_detail == "" and restored.entries[0].passed_over == ()
