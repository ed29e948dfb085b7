"""The discovery API: budgets bound text, contracts are whole, results are plain JSON."""

from __future__ import annotations

import ast

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ptc_plus.discovery import api as discovery
from ptc_plus.discovery.errors import InvalidBudget, InvalidDiscoveryArgument
from ptc_plus.discovery.snapshot import CatalogSnapshot
from ptc_plus.sdk import module_text

QUERIES = st.sampled_from(
    ["time", "git", "excel sheet", "查询数据库", "文件", "file contents", "create", "删除", "code", "pdf", "memo", "x"]
)


def assert_complete(snapshot: CatalogSnapshot, response: dict[str, object]) -> None:
    """Every expanded tool is a whole stub, every type it names is declared: nothing was cut."""
    text = str(response["text"])
    module = ast.parse(module_text(text))
    functions = {n.name for n in module.body if isinstance(n, ast.AsyncFunctionDef)}
    declared = {n.name for n in module.body if isinstance(n, ast.ClassDef)} | {
        t.id for n in module.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)
    }
    for item in response["expanded"]:  # type: ignore[attr-defined]
        capability = snapshot.get(item["identity"])
        assert capability is not None
        if capability.tool is not None:
            assert capability.tool.function in functions
            for name in capability.tool.result.refs | {r for p in capability.tool.parameters for r in p.type.refs}:
                assert any(d == name or d.endswith(name) for d in declared)
        else:
            assert capability.contract.strip() in text


@settings(max_examples=60, deadline=None)
@given(QUERIES, st.integers(min_value=1, max_value=3000), st.integers(min_value=1, max_value=25))
def test_search_never_exceeds_its_budget(corpus_snapshot: CatalogSnapshot, query: str, budget: int, limit: int) -> None:
    response = discovery.search(corpus_snapshot, query, budget=budget, limit=limit)
    assert response["tokens"] == corpus_snapshot.counter.count(response["text"]) <= budget
    assert_complete(corpus_snapshot, response)
    for item in response["not_expanded"]:
        own = corpus_snapshot.costs[item["identity"]]
        if not response["good_match"]:  # ADR 0077: nothing fits well, so nothing is expanded
            assert item["reason"] == "no-good-match" and not response["expanded"]
        else:
            assert item["reason"] == ("over-budget" if own > budget else "budget-exhausted")
        assert item["fetch"] == {"names": [item["identity"]], "budget": own}
    assert len(response["expanded"]) + len(response["not_expanded"]) <= limit
    considered = len(response["expanded"]) + len(response["not_expanded"])
    assert considered + response["more_matches"] == len(discovery.find(corpus_snapshot, query, limit=1000)["matches"])
    assert orjson.loads(orjson.dumps(response)) == response


def test_a_contract_larger_than_the_budget_is_a_reference_never_a_fragment(corpus_snapshot: CatalogSnapshot) -> None:
    big = max(corpus_snapshot.costs, key=corpus_snapshot.costs.__getitem__)
    response = discovery.inspect(corpus_snapshot, [big], budget=corpus_snapshot.costs[big] - 1)
    assert response["text"] == "" and response["tokens"] == 0
    [ref] = response["not_expanded"]
    assert ref["reason"] == "over-budget" and ref["identity"] == big
    fetched = discovery.inspect(corpus_snapshot, ref["fetch"]["names"], budget=ref["fetch"]["budget"])
    assert [e["identity"] for e in fetched["expanded"]] == [big]
    assert fetched["text"] == corpus_snapshot.get(big).contract  # type: ignore[union-attr]


def test_inspect_budget_bounds_text_not_count(corpus_snapshot: CatalogSnapshot) -> None:
    names = ["mcp:git/git_add", "mcp:git/git_commit", "mcp:git/git_status", "mcp:time/convert_time"]
    everything = discovery.inspect(corpus_snapshot, names, budget=100_000)
    assert [e["identity"] for e in everything["expanded"]] == names
    small = discovery.inspect(corpus_snapshot, names, budget=everything["tokens"] - 1)
    assert small["tokens"] < everything["tokens"]
    assert 0 < len(small["expanded"]) < len(names)
    assert_complete(corpus_snapshot, small)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.sampled_from(["git_add", "mcp:time/convert_time", "fetch", "calculate", "nope"]), max_size=5),
    st.integers(1, 800),
)
def test_inspect_respects_budget_and_order(corpus_snapshot: CatalogSnapshot, names: list[str], budget: int) -> None:
    response = discovery.inspect(corpus_snapshot, names, budget=budget)
    assert response["tokens"] <= budget
    assert_complete(corpus_snapshot, response)
    assert response["unknown"] == [n for n in names if n == "nope"]


def test_inspect_reports_ambiguous_names(corpus_snapshot: CatalogSnapshot) -> None:
    response = discovery.inspect(corpus_snapshot, ["create_table", "convert-contents", "convert_contents"])
    assert response["ambiguous"] == {"create_table": ["mcp:excel/create_table", "mcp:sqlite/create_table"]}
    assert [e["identity"] for e in response["expanded"]] == ["mcp:pandoc/convert-contents"]


def test_search_names_matches_it_did_not_expand(corpus_snapshot: CatalogSnapshot) -> None:
    response = discovery.search(corpus_snapshot, "git", budget=150, limit=8)
    assert response["expanded"] and response["not_expanded"]
    assert all(
        set(item) >= {"identity", "name", "tokens", "reason", "fetch", "score"} for item in response["not_expanded"]
    )
    scores = [i["score"] for i in sorted([*response["expanded"], *response["not_expanded"]], key=lambda i: -i["score"])]
    assert scores == sorted(scores, reverse=True)


def test_find_returns_names_only_and_tree_is_bounded(corpus_snapshot: CatalogSnapshot) -> None:
    found = discovery.find(corpus_snapshot, "excel", limit=5)
    assert len(found["matches"]) == 5 and all("text" not in m for m in found["matches"])
    tree = discovery.tree(corpus_snapshot, limit=3)
    excel = next(s for s in tree["sources"] if s["source"] == "mcp:excel")
    assert excel["count"] == 25 and len(excel["members"]) == 3 and excel["more"] == 22
    assert tree["count"] == len(corpus_snapshot.catalog.capabilities)
    assert orjson.loads(orjson.dumps(tree)) == tree


def test_off_capabilities_are_absent_from_a_restricted_snapshot(corpus_snapshot: CatalogSnapshot) -> None:
    keep = [c.identity for c in corpus_snapshot.catalog.capabilities if c.identity != "mcp:time/get_current_time"]
    restricted = corpus_snapshot.restrict(keep)
    assert "mcp:time/get_current_time" not in [
        m["identity"] for m in discovery.find(restricted, "current time")["matches"]
    ]
    assert discovery.inspect(restricted, ["mcp:time/get_current_time"])["unknown"] == ["mcp:time/get_current_time"]


@pytest.mark.parametrize("budget", [0, -5, 1.5, True, "100"])
def test_invalid_budgets_are_refused(corpus_snapshot: CatalogSnapshot, budget: object) -> None:
    with pytest.raises(InvalidBudget) as info:
        discovery.search(corpus_snapshot, "git", budget=budget)  # type: ignore[arg-type]
    assert info.value.to_json()["code"] == "PTC-3101"


def test_invalid_arguments_are_refused(corpus_snapshot: CatalogSnapshot) -> None:
    with pytest.raises(InvalidDiscoveryArgument):
        discovery.search(corpus_snapshot, 42)  # type: ignore[arg-type]
    with pytest.raises(InvalidDiscoveryArgument):
        discovery.find(corpus_snapshot, "git", limit=0)
    with pytest.raises(InvalidDiscoveryArgument):
        discovery.inspect(corpus_snapshot, [1, 2])  # type: ignore[list-item]


def test_call_serves_only_the_discovery_methods(corpus_snapshot: CatalogSnapshot) -> None:
    served = discovery.call(corpus_snapshot, "search", {"query": "git log", "budget": 500})
    assert served == discovery.search(corpus_snapshot, "git log", budget=500)
    assert discovery.call(corpus_snapshot, "tree", {})["count"] == len(corpus_snapshot.catalog.capabilities)
    for method, arguments in [("__init__", {}), ("search", {"query": "x", "evil": 1}), ("inspect", {"names": None})]:
        with pytest.raises(InvalidDiscoveryArgument):
            discovery.call(corpus_snapshot, method, arguments)
