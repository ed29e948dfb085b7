"""The seam's decision for one result: leave it, preview it, or keep it whole and say the budget was not met."""

from __future__ import annotations

import orjson
import pytest

from hookspecs import PRESENTATION_TRUNCATED, SPILL_HANDLE, ResultStatus, TokenCounter, ToolError, ToolResult
from ptc_plus.capabilities import choose_counter
from ptc_plus.capabilities.cost import EstimatedTokenCounter
from ptc_plus.preview import METADATA_KEY, READ_TOOL_NAME, preview_result, shown_text
from ptc_plus.preview.fit import CHARS_PER_TOKEN_CAP

COUNTER = choose_counter(None)
BIG = {"rows": [f"row {i} of many" for i in range(5000)]}


class MemoryStore:
    def __init__(self, fail: bool = False) -> None:
        self.texts: dict[str, str] = {}
        self.fail = fail

    def put(self, text: str) -> str:
        if self.fail:
            raise OSError(30, "Read-only file system")
        handle = f"spill-{len(self.texts):032x}"
        self.texts[handle] = text
        return handle

    def read(self, handle: str, offset: int = 0, limit: int | None = None) -> str:
        text = self.texts[handle]
        return text[offset:] if limit is None else text[offset : offset + limit]


def ok(value: object, tool: str = "run_code") -> ToolResult:
    return ToolResult(call_id="c", tool=tool, status=ResultStatus.OK, value=value)


def test_the_whole_text_is_spilled_and_the_value_untouched() -> None:
    store = MemoryStore()
    result = ok(BIG)
    annotation = preview_result(result, store=store, counter=COUNTER, budget=300, lang="en")
    assert annotation is not None and annotation.presentation is not None
    handle = annotation.metadata[SPILL_HANDLE]
    assert store.texts[handle] == shown_text(result) == orjson.dumps(BIG, option=orjson.OPT_SORT_KEYS).decode()
    assert annotation.metadata[PRESENTATION_TRUNCATED] is True
    facts = annotation.metadata[METADATA_KEY]
    assert isinstance(facts, dict) and facts["handle"] == handle and facts["tokens"] <= 300
    assert f'read_spill(handle="{handle}", offset={facts["offset"]}' in annotation.presentation
    assert f'await spill.read("{handle}", {facts["offset"]}' in annotation.presentation
    assert result.value == BIG


def test_an_error_is_previewed_as_the_host_shows_it() -> None:
    report = "Traceback ...\n" + "frame line\n" * 5000
    failed = ToolResult(
        call_id="c", tool="run_code", status=ResultStatus.ERROR, error=ToolError(code="PTC-2101", message=report)
    )
    store = MemoryStore()
    annotation = preview_result(failed, store=store, counter=COUNTER, budget=300, lang="en")
    assert annotation is not None
    assert store.texts[annotation.metadata[SPILL_HANDLE]] == shown_text(failed)
    assert orjson.loads(shown_text(failed)) == {"error": "PTC-2101", "message": report}


def test_within_the_budget_nothing_happens() -> None:
    store = MemoryStore()
    assert preview_result(ok({"small": 1}), store=store, counter=COUNTER, budget=300, lang="en") is None
    assert store.texts == {}


@pytest.mark.parametrize(
    "result",
    [
        ok(BIG, tool=READ_TOOL_NAME),
        ToolResult(
            call_id="c",
            tool="t",
            status=ResultStatus.OK,
            metadata={PRESENTATION_TRUNCATED: True},
            presentation="x" * 100_000,
        ),
    ],
    ids=["reads-are-not-previewed", "host-truncated"],
)
def test_results_left_alone(result: ToolResult) -> None:
    store = MemoryStore()
    assert preview_result(result, store=store, counter=COUNTER, budget=300, lang="en") is None
    assert store.texts == {}


def test_no_store_no_preview() -> None:
    assert preview_result(ok(BIG), store=None, counter=COUNTER, budget=300, lang="en") is None


def test_a_failed_spill_keeps_the_original_and_appends_one_line() -> None:
    result = ok(BIG)
    annotation = preview_result(result, store=MemoryStore(fail=True), counter=COUNTER, budget=300, lang="en")
    assert annotation is not None and annotation.presentation is not None
    original = shown_text(result)
    assert annotation.presentation.startswith(original + "\n")
    assert "\n" not in annotation.presentation[len(original) + 1 :]
    facts = annotation.metadata[METADATA_KEY]
    assert isinstance(facts, dict) and facts["unmet"] == "spill-failed" and "Read-only" in str(facts["detail"])
    assert PRESENTATION_TRUNCATED not in annotation.metadata


def test_a_budget_too_small_for_the_notice_keeps_the_original() -> None:
    annotation = preview_result(ok(BIG), store=MemoryStore(), counter=COUNTER, budget=3, lang="zh")
    assert annotation is not None and annotation.presentation is not None
    assert annotation.presentation.startswith(shown_text(ok(BIG)))
    assert annotation.metadata[METADATA_KEY]["unmet"] == "budget-too-small"


def costing(tokens: int, counter: TokenCounter, *, padding: str = "") -> ToolResult:
    """A result whose shown text costs exactly ``tokens`` (``padding`` first: a long, cheap run of spaces)."""
    for words in range(tokens + 1):
        result = ok(padding + "word " * words)
        cost = counter.count(shown_text(result))
        if cost == tokens:
            return result
        if cost > tokens:
            break
    raise AssertionError(f"no text of {tokens} {counter.unit} here")


BOUNDARY_BUDGET = 300
LONG_AND_CHEAP = "word " * (BOUNDARY_BUDGET - 60) + " " * (BOUNDARY_BUDGET * CHARS_PER_TOKEN_CAP)
"""Longer than the prefix :func:`~ptc_plus.preview.exceeds` probes first (which costs most of the budget), yet
within it in o200k tokens: the prefix alone must not decide."""
BOUNDARY = pytest.mark.parametrize(
    ("counter", "padding"),
    [(COUNTER, ""), (COUNTER, LONG_AND_CHEAP), (EstimatedTokenCounter(), "")],
    ids=["o200k-short", "o200k-long", "estimate"],  # the estimate has no cheap long text (4 characters a token)
)


@BOUNDARY
def test_a_result_costing_the_budget_exactly_is_left_whole(counter: TokenCounter, padding: str) -> None:
    """The budget is what the model may see: a result at it, not above it, needs no preview."""
    result = costing(BOUNDARY_BUDGET, counter, padding=padding)
    store = MemoryStore()
    assert preview_result(result, store=store, counter=counter, budget=BOUNDARY_BUDGET, lang="en") is None
    assert store.texts == {}


@BOUNDARY
def test_a_result_one_token_over_the_budget_is_previewed_within_it(counter: TokenCounter, padding: str) -> None:
    result = costing(BOUNDARY_BUDGET + 1, counter, padding=padding)
    store = MemoryStore()
    annotation = preview_result(result, store=store, counter=counter, budget=BOUNDARY_BUDGET, lang="en")
    assert annotation is not None and annotation.presentation is not None
    assert counter.count(annotation.presentation) <= BOUNDARY_BUDGET
    assert store.texts[annotation.metadata[SPILL_HANDLE]] == shown_text(result)
