"""Contract cost: tokens of the delivered text, with the unit named.

Preference order (ADR 0020, tokenizer per ADR 0060): the host's own counter for
the model route; else ``o200k_base`` counted by ``tiktoken`` from the vocabulary
shipped in this package (no download at run time); else an estimate whose unit
says ``estimated``.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Callable
from typing import TYPE_CHECKING

import attrs

from hookspecs.services import TokenCounter
from ptc_plus.capabilities.o200k import PAT_STR, o200k_encoding

if TYPE_CHECKING:
    import tiktoken

O200K_UNIT = "o200k_base tokens"
ESTIMATE_UNIT = "estimated tokens (4 ASCII characters or 1 other character each)"


@attrs.frozen(kw_only=True)
class Cost:
    """A measured size: ``tokens`` in ``unit``."""

    tokens: int
    unit: str


COUNT_MEMO_CHARS = 16_000_000
"""Characters of counted texts a :class:`BpeTokenCounter` remembers before it starts afresh (bounds its memory)."""


class BpeTokenCounter:
    """Counts ``o200k_base`` tokens offline: ``tiktoken`` over the shipped vocabulary (ADR 0060).

    Counts are remembered by text (ADR 0119): a count is a function of the text alone, and a host starting
    sessions over one catalog counts the same 2,000 contracts at every start (1.1 s of a 3.5 s start).
    """

    def __init__(self, encoding: tiktoken.Encoding) -> None:
        self._encoding = encoding
        self._memo: dict[str, int] = {}
        self._memo_chars = 0

    @property
    def unit(self) -> str:
        return O200K_UNIT

    def count(self, text: str) -> int:
        known = self._memo.get(text)
        if known is None:
            known = len(self._encoding.encode_ordinary(text))
            if self._memo_chars + len(text) > COUNT_MEMO_CHARS:
                self._memo.clear()
                self._memo_chars = 0
            self._memo[text] = known
            self._memo_chars += len(text)
        return known

    @property
    def splits_at_line_starts(self) -> bool:
        """Whether ``count(a + b) == count(a) + count(b)`` whenever ``a + b`` may be cut there (:data:`LINE_START`).

        True for the ``o200k_base`` pre-tokenizer (:data:`~ptc_plus.capabilities.o200k.PAT_STR`), which
        tiktoken applies before any merge and whose pieces never run from a newline into such a
        character: the letter pieces exclude ``\\r\\n`` from their optional prefix, a punctuation piece's
        tail takes only ``\\r``, ``\\n`` and ``/``, and the rest are whitespace or digits. So merges never
        cross that boundary and the text's tokens are the pieces' tokens.
        """
        return getattr(self._encoding, "_pat_str", None) == PAT_STR


class EstimatedTokenCounter:
    """A tokenizer-free estimate: ASCII runs at ~4 characters per token, other characters 1 each.

    Only used when no real tokenizer is available; its unit says so.
    """

    @property
    def unit(self) -> str:
        return ESTIMATE_UNIT

    def count(self, text: str) -> int:
        ascii_chars = sum(1 for c in text if c < "\x80")
        return (ascii_chars + 3) // 4 + (len(text) - ascii_chars)


LINE_START = re.compile(r"(?<=\n)(?=[A-Za-z_#@])")
"""Where a text may be cut without changing an additive counter's total: after a newline, before an
ASCII letter, ``_``, ``#`` or ``@`` (conservative: plainly neither whitespace nor ``/`` in any regex flavour)."""

_LINE_END = re.compile(r"\n(?=[A-Za-z_#@])")
"""The newline before each :data:`LINE_START` cut. Found by its literal newline, a long text is searched at C
speed; :data:`LINE_START`'s lookbehind is tried at every position (6 times slower on a long contract)."""


def lines_of(text: str) -> list[str]:
    """``text`` cut at :data:`LINE_START`: ``LINE_START.split(text)``, found faster."""
    found: list[str] = []
    start = 0
    for newline in _LINE_END.finditer(text):
        end = newline.end()
        found.append(text[start:end])
        start = end
    found.append(text[start:])
    return found


LINE_MEMO_LIMIT = 200_000
"""Lines remembered by a :func:`line_counter` before it starts afresh (bounds its memory)."""


def line_counter(counter: TokenCounter) -> Callable[[str], int] | None:
    """``counter.count`` as a sum over lines (cut at :data:`LINE_START`), each distinct line counted once.

    Exactly ``counter.count`` (see :attr:`BpeTokenCounter.splits_at_line_starts`); ``None`` for a counter
    not known to be additive there (a host's, the estimate), whose callers count whole texts. Texts that
    share most of their lines — the growing trial deliveries of one discovery answer — then cost only
    their new lines, instead of a whole-text count each.
    """
    if isinstance(counter, DeferredCounter):
        counter = counter.resolve()
    if not isinstance(counter, BpeTokenCounter) or not counter.splits_at_line_starts:
        return None
    memo: dict[str, int] = {}
    count = counter.count

    def total(text: str) -> int:
        if len(memo) > LINE_MEMO_LIMIT:
            memo.clear()
        tokens = 0
        for line in lines_of(text):
            known = memo.get(line)
            if known is None:
                known = memo[line] = count(line)
            tokens += known
        return tokens

    return total


@functools.cache
def offline_counter() -> TokenCounter:
    """The best counter that needs nothing from the host: ``o200k_base`` if installed, else the estimate."""
    try:
        return BpeTokenCounter(o200k_encoding())
    except Exception:  # missing package or broken data: degrade to the labelled estimate
        logging.getLogger(__name__).warning(
            "the o200k_base tokenizer is unavailable; contract costs are estimated", exc_info=True
        )
        return EstimatedTokenCounter()


class DeferredCounter:
    """:func:`offline_counter`, built at its first count or unit, not when the counter is handed out (ADR 0101).

    Building ``o200k_base`` costs ~0.6 CPU-s (decompressing and decoding 200k ranks, then tiktoken's own
    tables). A plan with nothing to measure — ``ptc-plus exec`` without tools, a catalog of none — asks
    for neither, so it no longer pays that on every start. Once resolved it *is* :func:`offline_counter`:
    the same counts, the same unit, the same fallback to the labelled estimate.
    """

    def __init__(self) -> None:
        self._resolved: TokenCounter | None = None

    def resolve(self) -> TokenCounter:
        """The counter itself (built now if it was not yet)."""
        if self._resolved is None:
            self._resolved = offline_counter()
        return self._resolved

    @property
    def unit(self) -> str:
        return self.resolve().unit

    def count(self, text: str) -> int:
        return self.resolve().count(text)


def choose_counter(host_counter: TokenCounter | None) -> TokenCounter:
    """The host's counter when it has one, else :func:`offline_counter`."""
    return host_counter if host_counter is not None else offline_counter()


def measure(text: str, counter: TokenCounter) -> Cost:
    """The cost of delivering ``text``."""
    return Cost(tokens=counter.count(text), unit=counter.unit)
