"""The user's price sheet, so a Ralph cost cap can be kept (ADR 0125).

The host contract carries token counts, never prices. A user who sets
``[workflow] ralph_max_cost`` also lists prices in their user file (a
workspace file's are dropped: a repository must not make its own work look
cheap), one entry per model route as the host names it (``ChildResult.route``,
``provider:model``), each ``"uncached=U cached=C output=O"`` in the sheet's
currency per million tokens; ``cached`` may be left out and then costs what
``uncached`` costs (never less than the truth for a route that discounts it)::

    [workflow]
    ralph_max_cost = 2.0
    prices = { "openai:gpt-4o-mini" = "uncached=0.15 cached=0.075 output=0.60" }

A cost cap without any price is refused at start (``PTC-8034``); an entry
that does not parse likewise (``PTC-8035``). A round whose cost cannot be
known — its route has no entry, or the route did not report its counts —
ends the run ``budget-limited``: a cap that cannot be checked is treated as
reached, never as not reached.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import attrs

from hookspecs.children import ChildResult
from ptc_plus.workflow.errors import RalphPriceInvalid

PER = 1_000_000
_KEYS = frozenset({"uncached", "cached", "output"})


@attrs.frozen(kw_only=True)
class Price:
    """One route's prices per million tokens."""

    uncached: float
    cached: float
    output: float


@attrs.frozen(kw_only=True)
class PriceSheet:
    """Route → :class:`Price`; :meth:`cost` prices one child's reported usage."""

    prices: Mapping[str, Price] = attrs.field(factory=dict)

    @classmethod
    def parse(cls, entries: Mapping[str, str]) -> PriceSheet:
        """The sheet of ``[workflow] prices``; raises :class:`RalphPriceInvalid` naming the first bad entry."""
        return cls(prices={route: _price(route, text) for route, text in entries.items()})

    def cost(self, result: ChildResult) -> float | None:
        """What the child's requests cost, or ``None`` when it cannot be known (no price, counts unreported).

        Input whose cached part is unreported is priced as uncached (the higher price)."""
        price = self.prices.get(result.route)
        if price is None or result.input_tokens is None or result.output_tokens is None:
            return None
        cached = min(result.cached_input_tokens or 0, result.input_tokens)
        uncached = result.input_tokens - cached
        return (uncached * price.uncached + cached * price.cached + result.output_tokens * price.output) / PER


def _price(route: str, text: str) -> Price:
    values: dict[str, float] = {}
    for part in text.split():
        name, equals, raw = part.partition("=")
        try:
            value = float(raw)
        except ValueError:
            value = math.nan
        if not equals or name not in _KEYS or name in values or not math.isfinite(value) or value < 0:
            raise RalphPriceInvalid(route=route, entry=text[:120])
        values[name] = value
    if "uncached" not in values or "output" not in values:
        raise RalphPriceInvalid(route=route, entry=text[:120])
    return Price(uncached=values["uncached"], cached=values.get("cached", values["uncached"]), output=values["output"])
