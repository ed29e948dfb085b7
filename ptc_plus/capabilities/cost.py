"""Contract cost: tokens of the delivered text, with the unit named.

Preference order (ADR 0020, tokenizer per ADR 0060): the host's own counter for
the model route; else ``o200k_base`` counted by ``tiktoken`` from the vocabulary
shipped in this package (no download at run time); else an estimate whose unit
says ``estimated``.
"""

from __future__ import annotations

import functools
import logging
from typing import TYPE_CHECKING

import attrs

from hookspecs.services import TokenCounter
from ptc_plus.capabilities.o200k import o200k_encoding

if TYPE_CHECKING:
    import tiktoken

O200K_UNIT = "o200k_base tokens"
ESTIMATE_UNIT = "estimated tokens (4 ASCII characters or 1 other character each)"


@attrs.frozen(kw_only=True)
class Cost:
    """A measured size: ``tokens`` in ``unit``."""

    tokens: int
    unit: str


class BpeTokenCounter:
    """Counts ``o200k_base`` tokens offline: ``tiktoken`` over the shipped vocabulary (ADR 0060)."""

    def __init__(self, encoding: tiktoken.Encoding) -> None:
        self._encoding = encoding

    @property
    def unit(self) -> str:
        return O200K_UNIT

    def count(self, text: str) -> int:
        return len(self._encoding.encode_ordinary(text))


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


def choose_counter(host_counter: TokenCounter | None) -> TokenCounter:
    """The host's counter when it has one, else :func:`offline_counter`."""
    return host_counter if host_counter is not None else offline_counter()


def measure(text: str, counter: TokenCounter) -> Cost:
    """The cost of delivering ``text``."""
    return Cost(tokens=counter.count(text), unit=counter.unit)
