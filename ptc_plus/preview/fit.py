"""A bounded preview of a long text: its head and tail around a notice, within a token budget.

A pure function of the text, the budget, the counter and the notice: no I/O,
so the seam that spills and annotates stays thin and this part is tested on
its own. Cuts are by characters (``str`` indices), the same unit in which the
rest is read back, so the notice's offset is where reading continues.
"""

from __future__ import annotations

from collections.abc import Callable

import attrs

from hookspecs import TokenCounter

CHARS_PER_TOKEN_CAP = 16
"""The most characters one token is assumed to cover when bounding a search (a guess above real ratios)."""

HEAD_SHARE = 0.75
"""Of what the notice leaves, the head's share; the tail (where errors and totals tend to be) gets the rest."""

Notice = Callable[[int, int], str]
"""``notice(head_chars, tail_chars)``: the text placed between head and tail."""


@attrs.frozen(kw_only=True)
class Preview:
    """What the model sees instead of the whole text."""

    text: str
    head: int
    """Characters shown from the start: reading the rest starts at this offset."""
    tail: int
    """Characters shown from the end."""
    tokens: int
    """Cost of :attr:`text`."""


def exceeds(text: str, budget: int, counter: TokenCounter) -> bool:
    """Whether ``text`` costs more than ``budget``; a huge text is judged by a prefix first."""
    probe = text[: budget * CHARS_PER_TOKEN_CAP + 1]
    if len(probe) < len(text) and counter.count(probe) > budget:
        return True
    return counter.count(text) > budget


def fit_preview(text: str, budget: int, counter: TokenCounter, notice: Notice) -> Preview | None:
    """The longest head and tail of ``text`` that fit ``budget`` with the notice between them.

    ``None`` when not even the notice fits (the budget is too small to say where the rest is).
    """
    reserve = counter.count(notice(len(text), len(text)) + "\n\n")  # the widest numbers the notice can hold
    room = budget - reserve
    if room < 0:
        return None
    head_budget = int(room * HEAD_SHARE)
    head = _longest(min(len(text), head_budget * CHARS_PER_TOKEN_CAP), lambda n: counter.count(text[:n]) <= head_budget)
    tail_budget = room - counter.count(text[:head])
    tail_limit = min(len(text) - head, tail_budget * CHARS_PER_TOKEN_CAP)
    tail = _longest(tail_limit, lambda n: counter.count(text[len(text) - n :]) <= tail_budget)
    for _ in range(16):
        shown = _join(text, head, tail, notice)
        tokens = counter.count(shown)
        if tokens <= budget:
            return Preview(text=shown, head=head, tail=tail, tokens=tokens)
        # Token boundaries at the joins can cost a little more than the parts did: shrink and retry.
        tail, head = (tail * 4 // 5, head) if tail else (0, head * 4 // 5)
    return None


def _join(text: str, head: int, tail: int, notice: Notice) -> str:
    parts = [text[:head], notice(head, tail)]
    if tail:
        parts.append(text[len(text) - tail :])
    return "\n".join(parts)


def _longest(limit: int, fits: Callable[[int], bool]) -> int:
    """The largest ``n`` in ``[0, limit]`` with ``fits(n)`` (``fits`` assumed monotone, ``fits(0)`` true)."""
    low, high = 0, max(0, limit)
    while low < high:
        middle = (low + high + 1) // 2
        if fits(middle):
            low = middle
        else:
            high = middle - 1
    return low
