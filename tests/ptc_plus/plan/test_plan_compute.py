"""Plan computation: its six steps, its allocation rules and its counter-examples."""

from __future__ import annotations

import random
from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ptc_plus.config import CapabilityChoice, Disclosure, ManagementSection, PtcConfig, StatisticsSection
from ptc_plus.plan import (
    PlanCandidate,
    PlanEntry,
    PlanInput,
    PlanInputInvalid,
    Reason,
    Scope,
    ScopeStats,
    StatisticsVote,
    compute_plan,
    plan_bytes,
    plan_from_json,
    plan_to_json,
    reason_text,
)

FULL, ON_DEMAND, OFF = Disclosure.FULL, Disclosure.ON_DEMAND, Disclosure.OFF
STATS = StatisticsSection(window=20, min_samples=5, threshold=0.3)


def config(
    *,
    enabled: bool = True,
    budget: int = 1000,
    baseline: Sequence[str] = (),
    choices: dict[str, Disclosure] | None = None,
    statistics: StatisticsSection = STATS,
) -> PtcConfig:
    return PtcConfig(
        management=ManagementSection(enabled=enabled, budget_tokens=budget, baseline=tuple(baseline)),
        capabilities={k: CapabilityChoice(disclosure=v) for k, v in (choices or {}).items()},
        statistics=statistics,
    )


def ws(coverage: float | None, samples: int = 10) -> ScopeStats:
    return ScopeStats(coverage=coverage, samples=samples)


def plan_for(candidates: Sequence[PlanCandidate], cfg: PtcConfig, **kwargs: object):  # type: ignore[no-untyped-def]
    return compute_plan(PlanInput(candidates=candidates, config=cfg, config_revision="sha256:test", **kwargs))  # type: ignore[arg-type]


def cap(identity: str, cost: int = 100, **kwargs: object) -> PlanCandidate:
    return PlanCandidate(identity=identity, cost_tokens=cost, **kwargs)  # type: ignore[arg-type]


def test_management_off_is_the_host_provision() -> None:
    candidates = [cap("host:a"), cap("host:b", 5000), cap("host:run_code", managed=False)]
    plan = plan_for(candidates, config(enabled=False, budget=10, choices={"host:a": OFF}))
    assert plan.members(FULL) == ("host:a", "host:b")
    assert {e.reason for e in plan.entries} == {Reason.MANAGEMENT_OFF}
    assert plan.entry("host:run_code") is None  # unmanaged never enters a plan
    assert (plan.management, plan.used_tokens, plan.overage_tokens) == (False, 5100, 0)


@pytest.mark.parametrize(
    ("vote", "statistics"),
    [
        (StatisticsVote.USABLE, STATS),
        (StatisticsVote.USABLE, StatisticsSection(enabled=False)),
        (StatisticsVote.CORRUPT, STATS),
        (StatisticsVote.UNAVAILABLE, STATS),
    ],
    ids=["statistics-100%", "statistics-off", "statistics-corrupt", "statistics-unavailable"],
)
def test_explicit_on_demand_stays_on_demand(vote: StatisticsVote, statistics: StatisticsSection) -> None:
    candidates = [cap("host:a", workspace=ws(1.0, 20), user=ws(1.0, 20))]
    plan = plan_for(
        candidates, config(choices={"host:a": ON_DEMAND}, baseline=["host:a"], statistics=statistics), statistics=vote
    )
    entry = plan.entry("host:a")
    assert entry is not None and (entry.disclosure, entry.reason) == (ON_DEMAND, Reason.EXPLICIT)


def test_full_on_demand_off_on_the_same_capability() -> None:
    for choice in (FULL, ON_DEMAND, OFF):
        plan = plan_for([cap("host:a")], config(choices={"host:a": choice}))
        entry = plan.entry("host:a")
        assert entry is not None and entry.disclosure is choice and entry.reason is Reason.EXPLICIT


def test_explicit_full_over_budget_is_kept_and_reported() -> None:
    candidates = [cap("host:a", 700), cap("host:b", 600), cap("host:c", 10, workspace=ws(0.9))]
    plan = plan_for(candidates, config(budget=1000, choices={"host:a": FULL, "host:b": FULL}))
    assert plan.members(FULL) == ("host:a", "host:b")
    assert (plan.used_tokens, plan.overage_tokens) == (1300, 300)
    a, b, c = (plan.entry(i) for i in ("host:a", "host:b", "host:c"))
    assert a is not None and b is not None and c is not None
    assert (a.overage, b.overage) == (False, True)
    assert (c.disclosure, c.reason) == (ON_DEMAND, Reason.BUDGET_EXHAUSTED)


def test_explicit_full_never_beyond_the_real_context() -> None:
    candidates = [cap("host:a", 700), cap("host:b", 600)]
    plan = plan_for(candidates, config(budget=100, choices={"host:a": FULL, "host:b": FULL}), context_tokens=1000)
    b = plan.entry("host:b")
    assert plan.members(FULL) == ("host:a",)
    assert b is not None and (b.disclosure, b.reason) == (ON_DEMAND, Reason.CONTEXT_LIMIT)


def test_evidence_order_workspace_then_user_then_baseline() -> None:
    candidates = [
        cap("host:ws", workspace=ws(0.5), user=ws(0.0)),
        cap("host:user", workspace=ws(0.9, samples=2), user=ws(0.6)),
        cap("host:base", workspace=ws(None, samples=0)),
        cap("host:none"),
    ]
    # The three backed members fit, the whole catalog does not (else all four are fits-budget, ADR 0080).
    plan = plan_for(candidates, config(budget=300, baseline=["host:base"]))
    got = {e.identity: (e.disclosure, e.reason, e.scope) for e in plan.entries}
    assert got == {
        "host:ws": (FULL, Reason.WORKSPACE_STATISTICS, Scope.WORKSPACE),
        "host:user": (FULL, Reason.USER_STATISTICS, Scope.USER),
        "host:base": (FULL, Reason.BASELINE, None),
        "host:none": (ON_DEMAND, Reason.NOT_BACKED, None),
    }
    ws_entry = plan.entry("host:ws")
    assert ws_entry is not None and (ws_entry.coverage, ws_entry.samples) == (0.5, 10)


def test_sufficient_statistics_replace_baseline_membership() -> None:
    plan = plan_for([cap("host:a", workspace=ws(0.1)), cap("host:big", 2000)], config(baseline=["host:a"]))
    entry = plan.entry("host:a")  # it would fit alone: only its statistics keep it on-demand
    assert entry is not None and (entry.disclosure, entry.reason) == (ON_DEMAND, Reason.WORKSPACE_STATISTICS)


def test_unusable_statistics_fall_back_to_the_baseline() -> None:
    candidates = [cap("host:a", workspace=ws(0.1)), cap("host:b", workspace=ws(0.9))]
    plan = plan_for(candidates, config(budget=150, baseline=["host:a"]), statistics=StatisticsVote.CORRUPT)
    assert plan.statistics == "corrupt"
    assert plan.members(FULL) == ("host:a",)
    b = plan.entry("host:b")
    assert b is not None and b.reason is Reason.NOT_BACKED


def test_fill_order_and_a_too_long_candidate_stays_on_demand() -> None:
    candidates = [
        cap("host:big", 900, workspace=ws(0.95)),
        cap("host:mid", 300, workspace=ws(0.8)),
        cap("host:r1", 200),
        cap("host:r0", 200),
        cap("host:cheap", 100, workspace=ws(0.8)),
        cap("host:tie-b", 100, workspace=ws(0.5)),
        cap("host:tie-a", 100, workspace=ws(0.5)),
    ]
    plan = plan_for(candidates, config(budget=1000, baseline=["host:r0", "host:r1"]))
    # 0.95 big fits (900); 0.8 cheap fits (1000); everything else no longer fits
    assert plan.members(FULL) == ("host:big", "host:cheap")
    plan = plan_for(candidates, config(budget=850, baseline=["host:r0", "host:r1"]))
    # big (900) alone exceeds 850: stays on-demand; then by coverage, cost, identity; baseline last by rank
    assert plan.members(FULL) == ("host:cheap", "host:mid", "host:r0", "host:tie-a", "host:tie-b")
    r1 = plan.entry("host:r1")  # same cost as r0 but a later baseline rank: it is the one left out
    assert r1 is not None and (r1.disclosure, r1.reason, r1.baseline_rank) == (ON_DEMAND, Reason.BUDGET_EXHAUSTED, 1)
    big = plan.entry("host:big")
    assert big is not None and (big.disclosure, big.reason) == (ON_DEMAND, Reason.BUDGET_EXHAUSTED)
    assert plan.used_tokens == 800


def test_child_never_gains_what_its_parent_lacks() -> None:
    candidates = [cap("host:a"), cap("host:b")]
    plan = plan_for(candidates, config(choices={"host:b": FULL}), parent_members=frozenset({"host:a"}))
    b = plan.entry("host:b")
    assert b is not None and (b.disclosure, b.reason) == (None, Reason.OUTSIDE_PARENT_SCOPE)


def test_host_absent_is_reported() -> None:
    candidates = [cap("host:gone", host_provided=False), cap("host:a")]
    plan = plan_for(candidates, config(choices={"mcp:x/y": FULL}, baseline=["skill:nope"]))
    absent = {e.identity for e in plan.entries if e.reason is Reason.HOST_ABSENT}
    assert absent == {"host:gone", "mcp:x/y", "skill:nope"}
    assert all(e.disclosure is None for e in plan.entries if e.reason is Reason.HOST_ABSENT)


def test_shared_types_are_charged_once_through_delivery_cost() -> None:
    shared = 400

    def delivery(stable: Sequence[str], varying: Sequence[str] = ()) -> int:
        ids = [*stable, *varying]
        return (shared if ids else 0) + 100 * len(ids)

    candidates = [cap(f"mcp:s/t{n}", 500, workspace=ws(0.9)) for n in range(3)]
    plan = plan_for(candidates, config(budget=700), delivery_cost=delivery)
    assert len(plan.members(FULL)) == 3 and plan.used_tokens == 700


def test_no_statistics_store_means_no_vote_not_a_guess() -> None:
    candidates = [cap("host:a", workspace=ws(0.1)), cap("host:b", workspace=ws(0.9))]
    plan = plan_for(candidates, config(budget=150, baseline=["host:a"]), statistics=StatisticsVote.UNAVAILABLE)
    assert plan.statistics == "unavailable"
    assert plan.members(FULL) == ("host:a",)
    assert {e.reason for e in plan.entries} == {Reason.BASELINE, Reason.NOT_BACKED}
    assert all(e.coverage is None and e.samples is None for e in plan.entries)


def test_member_facts_are_carried_into_the_plan() -> None:
    candidate = cap("host:a", name="a", kind="tool", revision="sha256:0123")
    entry = plan_for([candidate], config()).entry("host:a")
    assert entry is not None and (entry.name, entry.kind, entry.revision) == ("a", "tool", "sha256:0123")
    roundtrip = plan_from_json(plan_to_json(plan_for([candidate], config())))
    assert roundtrip.entry("host:a") == entry


def test_duplicate_identities_are_refused() -> None:
    with pytest.raises(PlanInputInvalid):
        plan_for([cap("host:a"), cap("host:a")], config())


stats_strategy = st.one_of(
    st.none(), st.builds(ScopeStats, coverage=st.one_of(st.none(), st.floats(0, 1)), samples=st.integers(0, 30))
)
candidate_lists = st.lists(
    st.builds(
        PlanCandidate,
        identity=st.sampled_from([f"host:t{n}" for n in range(25)]),
        cost_tokens=st.integers(0, 600),
        host_provided=st.booleans(),
        workspace=stats_strategy,
        user=stats_strategy,
    ),
    unique_by=lambda c: c.identity,
    max_size=25,
)
choice_maps = st.dictionaries(
    st.sampled_from([f"host:t{n}" for n in range(25)]), st.sampled_from(Disclosure), max_size=8
)


@settings(max_examples=150, deadline=None)  # a property of the result, not of its speed
@given(
    candidates=candidate_lists,
    choices=choice_maps,
    budget=st.integers(0, 3000),
    seed=st.integers(0, 2**16),
    vote=st.sampled_from(StatisticsVote),
)
def test_plan_invariants(
    candidates: list[PlanCandidate], choices: dict[str, Disclosure], budget: int, seed: int, vote: StatisticsVote
) -> None:
    cfg = config(budget=budget, choices=choices, baseline=[f"host:t{n}" for n in range(0, 25, 3)])
    plan = plan_for(candidates, cfg, statistics=vote)
    # deterministic: input order does not matter, bytes are identical
    shuffled = list(candidates)
    random.Random(seed).shuffle(shuffled)
    assert plan_bytes(plan_for(shuffled, cfg, statistics=vote)) == plan_bytes(plan)
    # statistics never switch anything off, never override an explicit choice
    for entry in plan.entries:
        if entry.disclosure is OFF:
            assert choices.get(entry.identity) is OFF
        if entry.identity in choices and entry.reason is not Reason.HOST_ABSENT:
            assert entry.reason is Reason.EXPLICIT and entry.disclosure is choices[entry.identity]
    # automatic full never exceeds what explicit full left of the budget
    costs = {c.identity: c.cost_tokens for c in candidates}
    explicit = sum(costs[e.identity] for e in plan.entries if e.disclosure is FULL and e.reason is Reason.EXPLICIT)
    automatic = sum(costs[e.identity] for e in plan.entries if e.disclosure is FULL and e.reason is not Reason.EXPLICIT)
    assert automatic <= max(0, budget - explicit)
    assert plan.used_tokens == explicit + automatic
    assert plan.overage_tokens == max(0, explicit - budget)
    assert plan_from_json(plan_to_json(plan)) == plan


def test_every_reason_has_text_in_both_locales() -> None:
    for reason in Reason:
        entry = PlanEntry(
            identity="host:a", disclosure=ON_DEMAND, reason=reason, coverage=0.42, samples=12, baseline_rank=0
        )
        for lang in ("en", "zh"):
            assert reason_text(entry, lang)
    statistics_entry = PlanEntry(
        identity="host:a", disclosure=FULL, reason=Reason.WORKSPACE_STATISTICS, coverage=0.42, samples=12
    )
    assert "42%" in reason_text(statistics_entry, "en") and "12" in reason_text(statistics_entry, "zh")
