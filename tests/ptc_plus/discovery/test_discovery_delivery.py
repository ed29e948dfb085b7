"""Discovery answers measured by line sums (linear in the candidates) equal those measured whole, byte for byte."""

from __future__ import annotations

import attrs
import orjson
import pytest

from ptc_plus.capabilities import cost
from ptc_plus.capabilities.contract import ToolTally, delivery_text
from ptc_plus.discovery import api as discovery
from ptc_plus.discovery.snapshot import CatalogSnapshot

QUERIES = ["time", "git", "excel sheet", "查询数据库", "文件", "file contents", "create", "删除", "code", "pdf", "memo"]
BUDGETS = [1, 60, 150, 400, 900, 2000, 6000, 50_000]


class WholeCounter:
    """The same tokens, counted whole: not known to be additive, so discovery measures every trial's text."""

    def __init__(self, inner: cost.BpeTokenCounter) -> None:
        self._inner = inner

    @property
    def unit(self) -> str:
        return self._inner.unit

    def count(self, text: str) -> int:
        return self._inner.count(text)


@pytest.fixture(scope="module")
def counter(corpus_snapshot: CatalogSnapshot) -> cost.BpeTokenCounter:
    found = corpus_snapshot.counter
    if not isinstance(found, cost.BpeTokenCounter) or not found.splits_at_line_starts:
        pytest.skip("the o200k_base tokenizer is not installed")
    return found


@pytest.fixture(scope="module")
def whole(corpus_snapshot: CatalogSnapshot, counter: cost.BpeTokenCounter) -> CatalogSnapshot:
    return attrs.evolve(corpus_snapshot, counter=WholeCounter(counter))


def same(a: object, b: object) -> bool:
    return orjson.dumps(a, option=orjson.OPT_SORT_KEYS) == orjson.dumps(b, option=orjson.OPT_SORT_KEYS)


def test_line_sums_are_whole_counts(corpus_snapshot: CatalogSnapshot, counter: cost.BpeTokenCounter) -> None:
    lines = cost.line_counter(counter)
    assert lines is not None
    # Pieces the o200k pre-tokenizer joins across a newline: none of them is cut.
    tricky = ["a)\n/b", "x\n\n\n#y", "x \n\t\nY", "'s\n's", "1\n2", "é\nÉ", "_\n_", "\r\n@x", "\n", "", "a\n \nb"]
    texts = tricky + [c.contract for c in corpus_snapshot.catalog.capabilities]
    texts.append(delivery_text(corpus_snapshot.catalog.capabilities))
    for text in texts:
        assert lines(text) == counter.count(text), text[:80]
    assert cost.line_counter(WholeCounter(counter)) is None
    assert cost.line_counter(cost.EstimatedTokenCounter()) is None


def test_search_answers_equal_whole_counting(corpus_snapshot: CatalogSnapshot, whole: CatalogSnapshot) -> None:
    for query in QUERIES:
        for budget in BUDGETS:
            for limit in (3, 25):
                fast = discovery.search(corpus_snapshot, query, budget=budget, limit=limit)
                assert same(fast, discovery.search(whole, query, budget=budget, limit=limit)), (query, budget)


def test_inspect_answers_equal_whole_counting(corpus_snapshot: CatalogSnapshot, whole: CatalogSnapshot) -> None:
    identities = [c.identity for c in corpus_snapshot.catalog.capabilities]
    for step in (1, 3, 11):
        names = identities[::step]
        for budget in BUDGETS:
            fast = discovery.inspect(corpus_snapshot, names, budget=budget)
            assert same(fast, discovery.inspect(whole, names, budget=budget)), (step, budget)


def test_clashing_types_are_measured_whole(corpus_snapshot: CatalogSnapshot, counter: cost.BpeTokenCounter) -> None:
    # The catalog's renderings never clash with each other; a tool rendered apart (another catalog) may.
    first = next(c for c in corpus_snapshot.catalog.capabilities if c.tool is not None and c.tool.types)
    assert first.tool is not None and first.spec is not None
    decl = first.tool.types[0]
    other = attrs.evolve(decl, text=decl.text.replace(":", ":  # another shape\n   ", 1))
    spec = attrs.evolve(first.spec, name=first.spec.name + "_again")
    tool = attrs.evolve(first.tool, name=spec.name, function=first.tool.function + "_again", types=(other,))
    second = attrs.evolve(first, identity=spec.identity, name=spec.name, spec=spec, tool=tool)
    tally = ToolTally(counter.count)
    tally.add(first)
    assert tally.trial(second) is None  # delivery_text qualifies both: the tally does not model that
    assert tally.trial(first) is not None
    snapshot = attrs.evolve(corpus_snapshot, costs={**corpus_snapshot.costs, second.identity: 1})
    whole = attrs.evolve(snapshot, counter=WholeCounter(counter))
    for budget in BUDGETS:
        for chosen in ([first, second], [second, first]):
            fast = discovery._deliver(snapshot, chosen, budget)
            assert same(fast, discovery._deliver(whole, chosen, budget)), budget


def test_line_sums_choose_as_whole_counts_do(corpus_snapshot: CatalogSnapshot, counter: cost.BpeTokenCounter) -> None:
    # The public answers above would hide a wrong sum: discovery re-counts the answer whole and falls back.
    lines = cost.line_counter(counter)
    assert lines is not None
    tools = [c for c in corpus_snapshot.catalog.capabilities if c.tool is not None]
    others = [c for c in corpus_snapshot.catalog.capabilities if c.tool is None]
    assert len(tools) > 20 and others
    for step in (1, 3, 11):
        for budget in BUDGETS:
            chosen = [*tools[::step][:20], *others, *tools[1::step][:20]]  # a skill or resource ends the tally
            fast = discovery._choose(corpus_snapshot, chosen, budget, lines, additive=True)
            slow = discovery._choose(corpus_snapshot, chosen, budget, counter.count, additive=False)
            assert same(fast[1:], slow[1:]) and fast[0] == slow[0], (step, budget)
            assert fast[1] == counter.count(delivery_text(fast[0]))


def test_a_tally_counts_each_unit_text_once(corpus_snapshot: CatalogSnapshot, counter: cost.BpeTokenCounter) -> None:
    # Every trial re-measures the stub then last in the text: a long contract's lines are cut once per tally.
    counted: list[str] = []

    def count(text: str) -> int:
        counted.append(text)
        return counter.count(text)

    tally = ToolTally(count)
    chosen = []
    for tool in [c for c in corpus_snapshot.catalog.capabilities if c.tool is not None][:12]:
        measured = tally.trial(tool)
        if measured is not None:
            tally.add(tool)
            chosen.append(tool)
            assert measured == counter.count(delivery_text(chosen))
    assert len(chosen) > 5 and len(counted) == len(set(counted))
