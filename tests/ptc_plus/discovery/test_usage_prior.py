"""The workspace's usage as a prior between near ties of a search (ADR 0111)."""

from __future__ import annotations

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from hookspecs.types import ToolSpec
from ptc_plus import discovery
from ptc_plus.capabilities import build_catalog
from ptc_plus.discovery.prior import NEAR_TIE, near_tie, prefer_used
from ptc_plus.discovery.rules import Match, Ranking
from ptc_plus.plan import CapabilityPlan, PlanEntry, Reason, Scope
from ptc_plus.session.membership import workspace_usage


def _ranking(*matches: tuple[str, float, float]) -> Ranking:
    found = tuple(Match(identity=i, score=s, lexical=lex) for i, s, lex in matches)
    return Ranking(matches=found, confident=True, total=len(found))


def _order(ranking: Ranking) -> list[str]:
    return [m.identity for m in ranking.matches]


def test_a_near_tie_goes_to_the_capability_used_more() -> None:
    ranked = _ranking(("a", 1.0, 5.0), ("b", 0.999, 4.999), ("c", 0.5, 2.0))
    assert _order(prefer_used(ranked, {"b": 3})) == ["b", "a", "c"]
    assert _order(prefer_used(ranked, {"b": 3, "a": 3})) == ["a", "b", "c"]  # equal use: the ranker's order
    assert _order(prefer_used(ranked, {})) == ["a", "b", "c"]


def test_a_clearly_better_match_is_never_passed() -> None:
    fused_gap = _ranking(("a", 1.0, 5.0), ("b", 1.0 - 2 * NEAR_TIE, 5.0))
    assert _order(prefer_used(fused_gap, {"b": 1000})) == ["a", "b"]
    # Fused scores a hair apart, but the lexical match of ``a`` is clearly better (similarity made up for it).
    lexical_gap = _ranking(("a", 1.0, 5.0), ("b", 0.9999, 4.0))
    assert _order(prefer_used(lexical_gap, {"b": 1000})) == ["a", "b"]


def test_a_match_passes_only_what_it_is_a_near_tie_of() -> None:
    # c is a near tie of b, not of a: it passes b and stops below a, however much it was used.
    ranked = _ranking(("a", 1.0, 5.0), ("b", 0.996, 4.98), ("c", 0.992, 4.96))
    assert near_tie(ranked.matches[1], ranked.matches[2]) and not near_tie(ranked.matches[0], ranked.matches[2])
    assert _order(prefer_used(ranked, {"c": 9})) == ["a", "c", "b"]


scores = st.floats(min_value=0.01, max_value=4.0, allow_nan=False)


@given(st.lists(st.tuples(scores, st.integers(min_value=0, max_value=5)), min_size=1, max_size=12))
def test_the_prior_moves_a_match_only_above_near_ties_used_less(rows: list[tuple[float, int]]) -> None:
    ordered = sorted(rows, key=lambda r: -r[0])
    ranked = _ranking(*((f"c{n}", score, score * 5) for n, (score, _) in enumerate(ordered)))
    usage = {f"c{n}": uses for n, (_, uses) in enumerate(ordered)}
    after = prefer_used(ranked, usage)
    assert sorted(_order(after)) == sorted(_order(ranked))
    position = {m.identity: n for n, m in enumerate(ranked.matches)}
    for n, first in enumerate(after.matches):
        for second in after.matches[n + 1 :]:
            if position[first.identity] > position[second.identity]:  # ``first`` moved above ``second``
                assert near_tie(second, first) and usage[first.identity] > usage[second.identity]


TWINS = [
    ToolSpec(name="get_forecast", description="Get the weather forecast for a city.", source="mcp:alpha"),
    ToolSpec(name="get_forecast", description="Get the weather forecast for a city.", source="mcp:beta"),
    ToolSpec(name="send_email", description="Send an email to a recipient.", source="mcp:mail"),
]


@pytest.fixture(scope="module")
def twins() -> discovery.CatalogSnapshot:
    return discovery.build_snapshot(build_catalog(tools=TWINS, cache=None), cache=None)


def _found(answer: dict[str, object]) -> list[str]:
    return [e["identity"] for e in (*answer["expanded"], *answer["not_expanded"])]  # type: ignore[attr-defined]


def test_search_puts_the_used_twin_first(twins: discovery.CatalogSnapshot) -> None:
    query = "weather forecast for a city"
    assert _found(discovery.search(twins, query))[:2] == ["mcp:alpha/get_forecast", "mcp:beta/get_forecast"]
    used = attrs.evolve(twins, usage={"mcp:beta/get_forecast": 4})
    assert _found(discovery.search(used, query))[:2] == ["mcp:beta/get_forecast", "mcp:alpha/get_forecast"]
    both = discovery.search(used, ["weather forecast for a city", "city forecast"])
    assert _found(both)[:2] == ["mcp:beta/get_forecast", "mcp:alpha/get_forecast"]


def test_usage_never_lifts_a_capability_over_a_clearly_better_match(twins: discovery.CatalogSnapshot) -> None:
    used = attrs.evolve(twins, usage={"mcp:mail/send_email": 1000})
    assert _found(discovery.search(used, "weather forecast for a city"))[0] == "mcp:alpha/get_forecast"


def _entry(identity: str, scope: Scope | None, coverage: float | None, samples: int | None) -> PlanEntry:
    return PlanEntry(
        identity=identity,
        disclosure=None,
        reason=Reason.WORKSPACE_STATISTICS,
        coverage=coverage,
        samples=samples,
        scope=scope,
    )


def test_the_prior_counts_the_families_of_the_workspace_statistics_in_the_plan() -> None:
    entries = (
        _entry("host:a", Scope.WORKSPACE, 0.25, 20),
        _entry("host:b", Scope.USER, 0.5, 20),
        _entry("host:c", None, None, None),
        _entry("host:d", Scope.WORKSPACE, 0.0, 20),
    )
    plan = CapabilityPlan(
        config_revision="",
        management=True,
        statistics="workspace",
        budget_tokens=0,
        used_tokens=0,
        overage_tokens=0,
        entries=entries,
    )
    assert workspace_usage(plan) == {"host:a": 5}
