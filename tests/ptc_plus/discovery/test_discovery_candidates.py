"""The next candidates named compactly: one line each after the contracts that fit (ADR 0104)."""

from __future__ import annotations

import statistics

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from ptc_plus.discovery import api as discovery
from ptc_plus.discovery.snapshot import CatalogSnapshot

LINE_TOKENS = 40
"""The bound ADR 0104 states for one candidate line (o200k_base tokens; a line is at most 100 characters)."""


def test_every_candidate_line_is_short_and_much_cheaper_than_its_contract(benchmark_snapshot: CatalogSnapshot) -> None:
    capabilities = benchmark_snapshot.catalog.capabilities
    lines = {c.identity: discovery.candidate_line(c) for c in capabilities}
    costs = {i: benchmark_snapshot.counter.count(line) for i, line in lines.items()}
    assert all(len(line) <= discovery.CANDIDATE_CHARS and "\n" not in line for line in lines.values())
    assert all(line.startswith(i) for i, line in lines.items())
    assert max(costs.values()) <= LINE_TOKENS
    assert all(costs[i] < benchmark_snapshot.costs[i] for i in costs)
    # Five lines cost about what one median contract does.
    assert 5 * statistics.median(costs.values()) <= 1.5 * statistics.median(benchmark_snapshot.costs.values())


def test_the_answer_names_the_next_candidates_after_the_contracts(corpus_snapshot: CatalogSnapshot) -> None:
    answer = discovery.search(corpus_snapshot, "git", budget=150, limit=12)
    assert answer["expanded"] and len(answer["not_expanded"]) > discovery.NEXT_CANDIDATES
    named = [m["identity"] for m in answer["not_expanded"][: discovery.NEXT_CANDIDATES]]
    assert [line.split(": ")[0] for line in answer["candidates"]] == named
    assert answer["candidate_tokens"] == corpus_snapshot.counter.count("\n".join(answer["candidates"]))
    assert answer["tokens"] <= answer["budget"]
    # Nothing expanded is repeated as a candidate.
    assert not {m["identity"] for m in answer["expanded"]} & {line.split(": ")[0] for line in answer["candidates"]}


def test_a_no_good_match_answer_names_its_nearest_as_candidates(corpus_snapshot: CatalogSnapshot) -> None:
    answer = discovery.search(corpus_snapshot, "x", limit=3)
    assert not answer["good_match"] and not answer["expanded"]
    assert [line.split(": ")[0] for line in answer["candidates"]] == [m["identity"] for m in answer["not_expanded"]]


def test_a_tight_budget_still_names_the_candidates(corpus_snapshot: CatalogSnapshot) -> None:
    # The budget bounds the contracts' text; the lines are bounded by their count and length instead.
    tight = discovery.search(corpus_snapshot, "git", budget=1, limit=8)
    assert not tight["expanded"] and all(m["reason"] == "over-budget" for m in tight["not_expanded"])
    assert len(tight["candidates"]) == discovery.NEXT_CANDIDATES
    assert tight["candidate_tokens"] <= discovery.NEXT_CANDIDATES * LINE_TOKENS


@settings(max_examples=40, deadline=None)
@given(
    st.sampled_from(["time", "git", "excel sheet", "查询数据库", "文件", "memo", "x", "create"]),
    st.integers(min_value=1, max_value=3000),
    st.integers(min_value=1, max_value=25),
)
def test_candidates_are_bounded_and_repeat_byte_for_byte(
    corpus_snapshot: CatalogSnapshot, query: str, budget: int, limit: int
) -> None:
    answer = discovery.search(corpus_snapshot, query, budget=budget, limit=limit)
    assert answer["tokens"] <= budget
    assert len(answer["candidates"]) == min(discovery.NEXT_CANDIDATES, len(answer["not_expanded"]))
    assert answer["candidate_tokens"] <= len(answer["candidates"]) * LINE_TOKENS
    again = discovery.search(corpus_snapshot, query, budget=budget, limit=limit)
    assert orjson.dumps(again) == orjson.dumps(answer)
