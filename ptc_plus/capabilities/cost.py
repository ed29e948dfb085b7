"""Contract cost: tokens of the delivered text, with the unit named.

Preference order (ADR 0020): the host's own counter for the model route;
else the offline ``o200k_base`` tokenizer of ``bpe-openai`` (no download at
run time); else an estimate whose unit says ``estimated``.
"""

from __future__ import annotations

import functools
import logging
import warnings
from typing import Any

import attrs

from hookspecs.services import TokenCounter

O200K_UNIT = "o200k_base tokens"
ESTIMATE_UNIT = "estimated tokens (4 ASCII characters or 1 other character each)"


@attrs.frozen(kw_only=True)
class Cost:
    """A measured size: ``tokens`` in ``unit``."""

    tokens: int
    unit: str


class BpeTokenCounter:
    """Counts ``o200k_base`` tokens offline with the ``bpe-openai`` package."""

    def __init__(self, encoding: Any) -> None:
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
        with warnings.catch_warnings():
            # bpe-openai 0.1.4 reads its data with the deprecated importlib.resources.open_binary;
            # under -W error that warning would otherwise cost us the real tokenizer.
            warnings.simplefilter("ignore", DeprecationWarning)
            import bpe_openai

            return BpeTokenCounter(bpe_openai.get_encoding("o200k_base"))
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
