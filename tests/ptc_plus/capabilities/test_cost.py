"""Contract cost: real o200k_base tokens offline, host counter first, labelled estimate last."""

from __future__ import annotations

import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ptc_plus.capabilities import cost
from ptc_plus.capabilities.contract import delivery_text
from ptc_plus.discovery.snapshot import CatalogSnapshot


class FixedCounter:
    unit = "host tokens"

    def count(self, text: str) -> int:
        return len(text.split())


def test_offline_counter_is_o200k_base() -> None:
    counter = cost.offline_counter()
    assert counter.unit == "o200k_base tokens"
    assert counter.count("hello world") == 2
    assert counter.count("获取当前时间") == 3


def test_a_deferred_counter_is_the_offline_counter_once_asked() -> None:
    deferred = cost.DeferredCounter()
    assert deferred.unit == cost.offline_counter().unit
    assert deferred.count("获取当前时间 hello world") == cost.offline_counter().count("获取当前时间 hello world")
    assert deferred.resolve() is cost.offline_counter()
    lines = cost.line_counter(deferred)  # additive at line starts, as the counter it stands for
    assert lines is not None and lines("a = 1\nb = 2\n") == cost.offline_counter().count("a = 1\nb = 2\n")


@pytest.mark.usefixtures("fresh_offline_counter")
def test_a_deferred_counter_falls_back_to_the_estimate_as_the_offline_counter_does(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    deferred = cost.DeferredCounter()  # handed out while the tokenizer is fine: nothing is built yet
    monkeypatch.setitem(sys.modules, "tiktoken", None)
    assert isinstance(deferred.resolve(), cost.EstimatedTokenCounter)
    assert "estimated" in deferred.unit and deferred.count("abcdefgh") == 2
    assert cost.line_counter(deferred) is None


def test_host_counter_wins() -> None:
    host = FixedCounter()
    assert cost.choose_counter(host) is host
    assert cost.measure("a b c", host) == cost.Cost(tokens=3, unit="host tokens")


@pytest.mark.usefixtures("fresh_offline_counter")
def test_without_the_tokenizer_the_estimate_says_estimated(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "tiktoken", None)
    counter = cost.offline_counter()
    assert isinstance(counter, cost.EstimatedTokenCounter)
    assert "estimated" in counter.unit
    assert counter.count("abcdefgh") == 2 and counter.count("时间") == 2


@pytest.mark.usefixtures("fresh_offline_counter")
def test_a_broken_tokenizer_is_logged_for_the_operator(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Falling back to the estimate is not silent: the operator sees why costs are estimated (ADR 0057)."""
    monkeypatch.setitem(sys.modules, "tiktoken", None)
    with caplog.at_level("WARNING", logger="ptc_plus.capabilities.cost"):
        assert isinstance(cost.offline_counter(), cost.EstimatedTokenCounter)
    (record,) = [r for r in caplog.records if r.name == "ptc_plus.capabilities.cost"]
    assert record.levelname == "WARNING" and "estimated" in record.getMessage()
    assert record.exc_info is not None and issubclass(record.exc_info[0], ImportError)


def test_shared_types_are_charged_once_per_delivery(corpus_snapshot: CatalogSnapshot) -> None:
    pair = [corpus_snapshot.get("mcp:time/convert_time"), corpus_snapshot.get("mcp:time/get_current_time")]
    assert all(pair)
    together = corpus_snapshot.counter.count(delivery_text(pair))  # type: ignore[arg-type]
    apart = sum(corpus_snapshot.costs[c.identity] for c in pair if c)
    assert delivery_text(pair).count("class TimeResult(TypedDict):") == 1  # type: ignore[arg-type]
    assert together < apart


def test_snapshot_costs_are_the_tokens_of_each_contract(corpus_snapshot: CatalogSnapshot) -> None:
    for capability in corpus_snapshot.catalog.capabilities:
        assert corpus_snapshot.costs[capability.identity] == corpus_snapshot.counter.count(capability.contract) > 0


@given(st.text(alphabet="\n\r ab_#@/1-\t时", max_size=60))
def test_lines_are_cut_where_the_line_start_pattern_cuts(text: str) -> None:
    assert cost.lines_of(text) == cost.LINE_START.split(text)


def test_lines_of_a_whole_delivery_are_cut_where_the_pattern_cuts(corpus_snapshot: CatalogSnapshot) -> None:
    text = delivery_text(corpus_snapshot.catalog.capabilities)
    assert cost.lines_of(text) == cost.LINE_START.split(text)
    assert len(cost.lines_of(text)) > 100


class CountingEncoding:
    """An encoding that counts its calls: one token per word."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def encode_ordinary(self, text: str) -> list[int]:
        self.calls.append(text)
        return [0] * len(text.split())


def test_a_bpe_counter_counts_each_text_once_and_forgets_past_its_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    encoding = CountingEncoding()
    counter = cost.BpeTokenCounter(encoding)  # type: ignore[arg-type]
    contracts = [f"def tool_{n}(x: int) -> Any: ..." for n in range(3)]
    first = [counter.count(text) for text in contracts]
    # A second session over the same catalog counts nothing again (ADR 0119), and the counts are the same.
    assert [counter.count(text) for text in contracts] == first == [6, 6, 6]
    assert encoding.calls == contracts
    # Past the memo's bound it starts afresh: the counts stay exact.
    monkeypatch.setattr(cost, "COUNT_MEMO_CHARS", len(contracts[0]) + 1)
    assert counter.count("one two") == 2 and counter.count(contracts[0]) == 6
    assert encoding.calls[-2:] == ["one two", contracts[0]]
