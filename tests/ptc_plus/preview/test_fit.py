"""The preview itself: head and tail around the notice, within the budget, cut where reading resumes."""

from __future__ import annotations

import pytest

from ptc_plus.capabilities import choose_counter
from ptc_plus.capabilities.cost import EstimatedTokenCounter
from ptc_plus.preview import exceeds, fit_preview

TEXT = "".join(f"line {i}: {'数据' if i % 7 == 0 else 'data'} {i * 31 % 997}\n" for i in range(20_000))


def notice(head: int, tail: int) -> str:
    return f"[… {len(TEXT) - head - tail} characters from offset {head} are kept as spill-x …]"


@pytest.mark.parametrize("counter", [choose_counter(None), EstimatedTokenCounter()], ids=["o200k", "estimate"])
@pytest.mark.parametrize("budget", [60, 500, 2000])
def test_the_preview_fits_the_budget_and_shows_both_ends(counter: object, budget: int) -> None:
    preview = fit_preview(TEXT, budget, counter, notice)  # type: ignore[arg-type]
    assert preview is not None
    assert preview.tokens == counter.count(preview.text) <= budget  # type: ignore[attr-defined]
    assert preview.head > 0 and preview.tail > 0
    assert (
        preview.text == TEXT[: preview.head] + "\n" + notice(preview.head, preview.tail) + "\n" + TEXT[-preview.tail :]
    )


def test_a_bigger_budget_shows_more() -> None:
    counter = choose_counter(None)
    small, large = fit_preview(TEXT, 500, counter, notice), fit_preview(TEXT, 4000, counter, notice)
    assert small is not None and large is not None and large.head > small.head and large.tail > small.tail


def test_no_preview_when_not_even_the_notice_fits() -> None:
    assert fit_preview(TEXT, 5, choose_counter(None), notice) is None


def test_exceeds_judges_huge_texts_by_a_prefix_and_small_ones_whole() -> None:
    counter = choose_counter(None)
    assert exceeds(TEXT * 10, 2000, counter)
    assert not exceeds("short", 2000, counter)
    spaces = " " * 100_000  # few tokens for many characters: the prefix alone cannot decide
    assert exceeds(spaces, 2000, counter) == (counter.count(spaces) > 2000)
