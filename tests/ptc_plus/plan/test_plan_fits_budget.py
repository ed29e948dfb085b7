"""ADR 0080: with management on, a catalog whose undecided members fit the budget together is shown in full."""

from __future__ import annotations

import random
from collections.abc import Sequence

import pytest

from ptc_plus.config import CapabilityChoice, Disclosure, ManagementSection, PtcConfig, StatisticsSection
from ptc_plus.plan import (
    PlanCandidate,
    PlanInput,
    Reason,
    ScopeStats,
    StatisticsVote,
    compute_plan,
    plan_bytes,
    plan_from_json,
    plan_to_json,
    reason_text,
)

FULL, ON_DEMAND, OFF = Disclosure.FULL, Disclosure.ON_DEMAND, Disclosure.OFF
COSTS = {"host:a": 300, "host:b": 200, "host:c": 100}
"""A cold three-tool catalog of 600 tokens: no statistics, no baseline."""


def config(
    budget: int, choices: dict[str, Disclosure] | None = None, *, enabled: bool = True, baseline: Sequence[str] = ()
) -> PtcConfig:
    return PtcConfig(
        management=ManagementSection(enabled=enabled, budget_tokens=budget, baseline=tuple(baseline)),
        capabilities={k: CapabilityChoice(disclosure=v) for k, v in (choices or {}).items()},
        statistics=StatisticsSection(window=20, min_samples=5, threshold=0.3),
    )


def cold(costs: dict[str, int] = COSTS) -> list[PlanCandidate]:
    return [PlanCandidate(identity=identity, cost_tokens=cost) for identity, cost in costs.items()]


def decided(plan: object) -> dict[str, tuple[Disclosure | None, Reason]]:
    return {e.identity: (e.disclosure, e.reason) for e in plan.entries}  # type: ignore[attr-defined]


def plan_for(candidates: Sequence[PlanCandidate], cfg: PtcConfig, **kwargs: object):  # type: ignore[no-untyped-def]
    return compute_plan(PlanInput(candidates=candidates, config=cfg, config_revision="sha256:t", **kwargs))  # type: ignore[arg-type]


def test_a_cold_catalog_that_fits_is_all_full_exactly_as_the_hosts_provision() -> None:
    plan = plan_for(cold(), config(600), statistics=StatisticsVote.UNAVAILABLE)
    assert decided(plan) == {identity: (FULL, Reason.FITS_BUDGET) for identity in COSTS}
    assert (plan.management, plan.used_tokens, plan.overage_tokens) == (True, 600, 0)
    host = plan_for(cold(), config(600, enabled=False))
    assert plan.members(FULL) == host.members(FULL) and plan.used_tokens == host.used_tokens


def test_one_token_over_keeps_the_evidence_rule() -> None:
    plan = plan_for(cold(), config(599), statistics=StatisticsVote.UNAVAILABLE)
    assert decided(plan) == {identity: (ON_DEMAND, Reason.NOT_BACKED) for identity in COSTS}
    assert plan.used_tokens == 0


def test_one_token_over_fills_with_backed_members_only() -> None:
    candidates = [
        *cold(),
        PlanCandidate(identity="host:d", cost_tokens=1, workspace=ScopeStats(coverage=0.9, samples=9)),
    ]
    plan = plan_for(candidates, config(600, baseline=["host:c"]))
    assert decided(plan) == {
        "host:a": (ON_DEMAND, Reason.NOT_BACKED),
        "host:b": (ON_DEMAND, Reason.NOT_BACKED),
        "host:c": (FULL, Reason.BASELINE),
        "host:d": (FULL, Reason.WORKSPACE_STATISTICS),
    }
    assert plan.used_tokens == 101


def test_statistics_against_a_member_do_not_keep_it_out_when_everything_fits() -> None:
    rarely = PlanCandidate(identity="host:rare", cost_tokens=50, workspace=ScopeStats(coverage=0.0, samples=20))
    plan = plan_for([*cold(), rarely], config(650))
    entry = plan.entry("host:rare")
    assert entry is not None and (entry.disclosure, entry.reason) == (FULL, Reason.FITS_BUDGET)
    # The evidence is still recorded for the user, it just decided nothing.
    assert (entry.coverage, entry.samples, entry.window) == (0.0, 20, 20)


@pytest.mark.parametrize("budget", [600, 10_000])
def test_explicit_choices_and_off_still_win(budget: int) -> None:
    candidates = [*cold(), PlanCandidate(identity="host:d", cost_tokens=1000)]
    choices = {"host:a": OFF, "host:b": ON_DEMAND, "host:d": FULL}
    plan = plan_for(candidates, config(budget, choices))
    assert decided(plan) == {
        "host:a": (OFF, Reason.EXPLICIT),
        "host:b": (ON_DEMAND, Reason.EXPLICIT),
        "host:c": (FULL, Reason.FITS_BUDGET) if budget == 10_000 else (ON_DEMAND, Reason.NOT_BACKED),
        "host:d": (FULL, Reason.EXPLICIT),
    }
    # Only what is left after the explicit full is measured against the budget.
    assert plan.used_tokens == (1100 if budget == 10_000 else 1000)
    assert plan.overage_tokens == (400 if budget == 600 else 0)


def test_a_server_units_choices_still_win() -> None:
    candidates = cold({"mcp:git/log": 10, "mcp:git/status": 10, "mcp-resources:git": 10, "host:c": 10})
    plan = plan_for(candidates, config(1000, {"mcp:git": OFF}))
    assert decided(plan) == {
        "mcp:git/log": (OFF, Reason.SERVER_UNIT),
        "mcp:git/status": (OFF, Reason.SERVER_UNIT),
        "mcp-resources:git": (OFF, Reason.SERVER_UNIT),
        "host:c": (FULL, Reason.FITS_BUDGET),
    }
    on_demand = plan_for(candidates, config(1000, {"mcp:git": ON_DEMAND}))
    assert on_demand.members(ON_DEMAND) == ("mcp-resources:git", "mcp:git/log", "mcp:git/status")
    assert on_demand.members(FULL) == ("host:c",)


def test_the_whole_set_is_measured_with_the_delivery_cost() -> None:
    shared = 250

    def delivery(stable: Sequence[str], varying: Sequence[str] = ()) -> int:
        # A type shared by every member is charged once: 600 summed alone, 850 delivered together.
        ids = [*stable, *varying]
        return (shared if ids else 0) + sum(COSTS[i] for i in ids)

    assert decided(plan_for(cold(), config(850), delivery_cost=delivery))["host:a"] == (FULL, Reason.FITS_BUDGET)
    assert plan_for(cold(), config(850), delivery_cost=delivery).used_tokens == 850
    under = plan_for(cold(), config(849), delivery_cost=delivery)
    assert under.members(FULL) == () and under.used_tokens == 0


def test_the_real_context_bounds_it_too() -> None:
    plan = plan_for(cold(), config(8000), context_tokens=599)
    assert plan.members(FULL) == ()
    assert plan_for(cold(), config(8000), context_tokens=600).members(FULL) == tuple(sorted(COSTS))


def test_it_is_deterministic_whatever_the_input_order() -> None:
    candidates = [PlanCandidate(identity=f"host:t{n:03}", cost_tokens=n % 17 + 1) for n in range(200)]
    cfg = config(sum(c.cost_tokens for c in candidates), {"host:t007": OFF})
    first = plan_bytes(plan_for(candidates, cfg))
    for seed in range(5):
        shuffled = candidates[:]
        random.Random(seed).shuffle(shuffled)
        assert plan_bytes(plan_for(shuffled, cfg)) == first
    plan = plan_for(candidates, cfg)
    assert len(plan.members(FULL)) == 199 and plan.entry("host:t007") is not None


def test_the_reason_reads_in_both_locales_and_round_trips() -> None:
    plan = plan_for(cold(), config(600))
    entry = plan.entry("host:a")
    assert entry is not None
    assert reason_text(entry, "en") == "the whole catalog fits the budget: shown in full"
    assert reason_text(entry, "zh") and reason_text(entry, "zh") != reason_text(entry, "en")
    assert plan_from_json(plan_to_json(plan)) == plan
    assert plan_to_json(plan)["entries"][0]["reason"] == "fits-budget"
