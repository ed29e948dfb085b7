"""Price sheets: how the evaluation weighs cached input, uncached input, cache writes and output into one bill.

A token is not a token on a provider's invoice: a cached input token costs a
fraction of an uncached one, an output token several times one. A headline
that adds them 1:1 favours the style that sends the most cached input (the
many-request styles) or the fewest output tokens. A :class:`PriceSheet` names
the multipliers (relative to one uncached input token) and the report prices
every run from its *counted* parts with it (:func:`cost`), beside the raw
token totals.

Three sheets, shaped after the price structures providers publish (no
provider is named: the shapes are what matter, and they change):

- ``default``: cache reads 0.1x, uncached input 1x, output 5x; writing the
  cache costs nothing extra (automatic prefix caching).
- ``write-surcharge``: as ``default``, but the uncached input a request
  writes into the prompt cache costs 1.25x (explicit cache writes).
- ``half-cache``: cache reads 0.5x, output 4x (an earlier generation of
  automatic caching, with a smaller discount and a cheaper output).

A sheet is a frozen value with a ``version``; the results file records the
sheet in force, so a regenerated report prices with the same numbers.
"""

from __future__ import annotations

import attrs

PRICES_VERSION = 1


@attrs.frozen(kw_only=True)
class PriceSheet:
    """Multipliers per token, relative to one uncached input token.

    :ivar cache_write: what an uncached input token the request writes into the cache costs; ``None``: the
        same as ``uncached`` (writing is free), so a run's cost does not need the written count.
    """

    name: str
    version: int = PRICES_VERSION
    cached: float
    uncached: float = 1.0
    cache_write: float | None = None
    output: float
    description: str = ""


DEFAULT = PriceSheet(
    name="default",
    cached=0.1,
    output=5.0,
    description="cache reads 0.1x, uncached input 1x, output 5x; cache writes at the uncached price",
)
WRITE_SURCHARGE = PriceSheet(
    name="write-surcharge",
    cached=0.1,
    cache_write=1.25,
    output=5.0,
    description="cache reads 0.1x, uncached input 1x, input written into the cache 1.25x, output 5x",
)
HALF_CACHE = PriceSheet(
    name="half-cache",
    cached=0.5,
    output=4.0,
    description="cache reads 0.5x, uncached input 1x, output 4x; cache writes at the uncached price",
)
SHEETS = {sheet.name: sheet for sheet in (DEFAULT, WRITE_SURCHARGE, HALF_CACHE)}


def cost(
    prices: PriceSheet,
    *,
    cached: float | None,
    uncached: float | None,
    written: float | None,
    output: float | None,
) -> float | None:
    """The bill of counted tokens in uncached-input units; ``None`` when a part the sheet prices is unknown.

    ``written`` is the part of ``uncached`` written into the cache; it is needed (and read) only by a sheet
    whose ``cache_write`` differs from ``uncached``.
    """
    if cached is None or uncached is None or output is None:
        return None
    bill = cached * prices.cached + uncached * prices.uncached + output * prices.output
    if prices.cache_write is not None and prices.cache_write != prices.uncached:
        if written is None:
            return None
        bill += written * (prices.cache_write - prices.uncached)
    return bill


__all__ = [
    "DEFAULT",
    "HALF_CACHE",
    "PRICES_VERSION",
    "SHEETS",
    "WRITE_SURCHARGE",
    "PriceSheet",
    "cost",
]
