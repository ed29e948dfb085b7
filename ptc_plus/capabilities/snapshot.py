"""A frozen, searchable view of a catalog: what discovery answers from.

The snapshot keeps only managed capabilities (unmanaged ones are never
listed), their measured contract costs and the search index. It is built once
per plan and shared; every discovery call is a pure function of it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import attrs

from hookspecs.services import TokenCounter
from ptc_plus.capabilities.capability import Capability
from ptc_plus.capabilities.catalog import Catalog
from ptc_plus.capabilities.cost import choose_counter
from ptc_plus.capabilities.index import SearchIndex, build_index
from ptc_plus.capabilities.keywords import CompiledKeywords, KeywordIndex, compile_keywords, default_keyword_index

DEFAULT_DISCOVERY_BUDGET = 2000
"""Tokens per discovery response unless the caller or the config says otherwise (ADR 0024)."""


@attrs.frozen(kw_only=True)
class CatalogSnapshot:
    """Managed capabilities, their costs in ``counter.unit`` and the index over them."""

    catalog: Catalog
    costs: Mapping[str, int]
    index: SearchIndex
    counter: TokenCounter = attrs.field(eq=False)
    default_budget: int = DEFAULT_DISCOVERY_BUDGET

    def get(self, identity: str) -> Capability | None:
        return self.catalog.get(identity)

    def restrict(self, identities: Iterable[str]) -> CatalogSnapshot:
        """The snapshot of only ``identities`` (for example a plan's effective set: ``off`` left out)."""
        catalog = self.catalog.restrict(identities)
        index = build_index(catalog.capabilities, self.index.keywords)
        costs = {c.identity: self.costs[c.identity] for c in catalog.capabilities}
        return attrs.evolve(self, catalog=catalog, costs=costs, index=index)


def build_snapshot(
    catalog: Catalog,
    *,
    counter: TokenCounter | None = None,
    keywords: KeywordIndex | CompiledKeywords | None = None,
    default_budget: int = DEFAULT_DISCOVERY_BUDGET,
    measured: Mapping[str, int] | None = None,
) -> CatalogSnapshot:
    """Snapshot the managed part of ``catalog``; ``counter`` defaults to the offline tokenizer.

    ``measured``: contract costs already measured in ``counter``'s unit, by identity (for
    example a plan's entries); only the others are counted here.
    """
    managed = Catalog(capabilities=catalog.managed())
    chosen = choose_counter(counter)
    if keywords is None:
        keywords = default_keyword_index()
    compiled = keywords if isinstance(keywords, CompiledKeywords) else compile_keywords(keywords)
    return CatalogSnapshot(
        catalog=managed,
        costs={
            c.identity: known if (known := (measured or {}).get(c.identity)) is not None else chosen.count(c.contract)
            for c in managed.capabilities
        },
        index=build_index(managed.capabilities, compiled),
        counter=chosen,
        default_budget=default_budget,
    )
