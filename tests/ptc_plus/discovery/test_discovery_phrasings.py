"""Several phrasings in one search: the rankings fused by reciprocal rank, one answer in one budget (ADR 0104)."""

from __future__ import annotations

import orjson
import pytest

from ptc_plus.discovery import api as discovery
from ptc_plus.discovery.errors import InvalidDiscoveryArgument
from ptc_plus.discovery.snapshot import CatalogSnapshot


def _ranked(answer: dict[str, object]) -> list[str]:
    return [m["identity"] for m in (*answer["expanded"], *answer["not_expanded"])]  # type: ignore[attr-defined]


def _score_order(answer: dict[str, object]) -> list[str]:
    items = [*answer["expanded"], *answer["not_expanded"]]  # type: ignore[misc]
    return [m["identity"] for m in sorted(items, key=lambda m: -m["score"])]


def test_a_tool_only_the_second_phrasing_finds_is_in_the_answer(corpus_snapshot: CatalogSnapshot) -> None:
    first = discovery.search(corpus_snapshot, "current time in a timezone", limit=3)
    second = discovery.search(corpus_snapshot, "create a git branch", limit=3)
    assert first["good_match"] and second["good_match"]
    only_second = [i for i in _ranked(second) if i not in _ranked(first)]
    assert only_second, "the two phrasings must find different tools for this test to mean anything"
    both = discovery.search(corpus_snapshot, ["current time in a timezone", "create a git branch"], limit=6)
    assert both["query"] == ["current time in a timezone", "create a git branch"]
    assert both["good_match"]
    assert set(_ranked(first)) | set(_ranked(second)) == set(_ranked(both))
    # Each phrasing's best is among the fused answer's first two (they tie on 1/61; the earlier phrasing wins).
    assert _ranked(both)[:2] == [_ranked(first)[0], _ranked(second)[0]]
    assert both["tokens"] == corpus_snapshot.counter.count(both["text"]) <= both["budget"]


def test_phrasings_that_agree_lift_the_shared_match(corpus_snapshot: CatalogSnapshot) -> None:
    one = discovery.search(corpus_snapshot, "jot down a note", limit=5)
    other = discovery.search(corpus_snapshot, "create note", limit=5)
    shared = [i for i in _ranked(one) if i in _ranked(other)]
    assert shared
    fused = discovery.search(corpus_snapshot, ["jot down a note", "create note"], limit=5)
    scores = {m["identity"]: m["score"] for m in (*fused["expanded"], *fused["not_expanded"])}
    ranks = {i: (_ranked(one).index(i) + 1 if i in _ranked(one) else None) for i in scores}
    for identity, score in scores.items():
        expected = sum(
            1 / (discovery.RRF_K + r.index(identity) + 1) for r in (_ranked(one), _ranked(other)) if identity in r
        )
        assert score == round(expected, 9), (identity, ranks)
    assert _ranked(fused) == _score_order(fused) or not fused["good_match"]
    assert _ranked(fused)[0] in shared


def test_a_single_phrasing_list_answers_as_the_string_does(corpus_snapshot: CatalogSnapshot) -> None:
    for query in ("git", "查询数据库", "x", ""):
        single = discovery.search(corpus_snapshot, query, budget=800, limit=7)
        listed = discovery.search(corpus_snapshot, [query], budget=800, limit=7)
        assert listed.pop("query") == [query]
        single.pop("query")
        assert orjson.dumps(listed) == orjson.dumps(single)


def test_fused_answers_are_byte_identical_for_identical_inputs(corpus_snapshot: CatalogSnapshot) -> None:
    query = ["read a file", "文件", "excel sheet"]
    first = orjson.dumps(discovery.search(corpus_snapshot, query, budget=1500))
    assert all(orjson.dumps(discovery.search(corpus_snapshot, list(query), budget=1500)) == first for _ in range(3))


def test_only_matches_of_confident_phrasings_are_expanded(corpus_snapshot: CatalogSnapshot) -> None:
    vague = discovery.search(corpus_snapshot, "x", limit=5)
    assert not vague["good_match"]
    fused = discovery.search(corpus_snapshot, ["create a git branch", "x"], limit=10, budget=5000)
    assert fused["good_match"]
    expanded = {m["identity"] for m in fused["expanded"]}
    confident = set(_ranked(discovery.search(corpus_snapshot, "create a git branch", limit=10)))
    assert expanded and expanded <= confident
    for item in fused["not_expanded"]:
        if item["identity"] not in confident:
            assert item["reason"] == discovery.NO_GOOD_MATCH


@pytest.mark.parametrize(
    "query",
    [[], ["ok", 3], ["q"] * (discovery.MAX_PHRASINGS + 1), [["nested"]], {"query": "x"}],
)
def test_a_bad_phrasing_list_is_a_typed_error(corpus_snapshot: CatalogSnapshot, query: object) -> None:
    with pytest.raises(InvalidDiscoveryArgument) as refused:
        discovery.search(corpus_snapshot, query)  # type: ignore[arg-type]
    assert refused.value.code == InvalidDiscoveryArgument.code
    assert discovery.search(corpus_snapshot, ["q"] * discovery.MAX_PHRASINGS)["query"] == ["q"] * 8


def test_call_serves_a_phrasing_list(corpus_snapshot: CatalogSnapshot) -> None:
    answer = discovery.call(corpus_snapshot, "search", {"query": ["jot down a note", "create note"], "limit": 3})
    assert answer["query"] == ["jot down a note", "create note"]
