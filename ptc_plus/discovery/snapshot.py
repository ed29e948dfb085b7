"""A frozen, searchable view of a catalog: what discovery answers from.

The snapshot keeps only managed capabilities (unmanaged ones are never
listed), their measured contract costs and the search index. It is built once
per plan and shared; every discovery call is a pure function of it. Its index
comes from the disk cache when a session already built it for the same
capabilities, keywords and code (:func:`~ptc_plus.discovery.index.cached_index`, ADR 0078).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TypeVar, cast

import attrs

from hookspecs.services import TokenCounter
from ptc_plus.capabilities import Capability, Catalog, DiskCache, UserCache, choose_counter, chosen_cache
from ptc_plus.discovery.index import SearchIndex, cached_index
from ptc_plus.discovery.keywords import CompiledKeywords, KeywordIndex, compile_keywords, default_keyword_index

_T = TypeVar("_T")

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
    cache: DiskCache | None = attrs.field(default=None, eq=False)
    """Where :meth:`restrict` looks for its index first (``None``: it builds it)."""
    usage: Mapping[str, int] = attrs.field(factory=dict)
    """Identity → how many of the workspace's session families used it (the plan's statistics): the prior
    between near ties of a search (:func:`~ptc_plus.discovery.prior.prefer_used`, ADR 0111); empty without."""
    _derived: dict[str, object] = attrs.field(init=False, factory=dict, eq=False, repr=False)

    def derived(self, name: str, build: Callable[[], _T]) -> _T:
        """``build()``, computed once per snapshot under ``name`` (only for pure functions of the snapshot).

        Discovery answers many queries from one snapshot; what it derives from the whole catalog (for
        example the semantic layer's catalog-order view) must not be derived again per query (ADR 0078).
        Two threads racing compute it twice and keep one; the values are equal.
        """
        if name not in self._derived:
            self._derived[name] = build()
        return cast(_T, self._derived[name])

    def get(self, identity: str) -> Capability | None:
        return self.catalog.get(identity)

    def restrict(self, identities: Iterable[str]) -> CatalogSnapshot:
        """The snapshot of only ``identities`` (for example a plan's effective set: ``off`` left out)."""
        catalog = self.catalog.restrict(identities)
        index = cached_index(catalog.capabilities, self.index.keywords, self.cache)
        costs = {c.identity: self.costs[c.identity] for c in catalog.capabilities}
        return attrs.evolve(self, catalog=catalog, costs=costs, index=index)


def build_snapshot(
    catalog: Catalog,
    *,
    counter: TokenCounter | None = None,
    keywords: KeywordIndex | CompiledKeywords | None = None,
    default_budget: int = DEFAULT_DISCOVERY_BUDGET,
    measured: Mapping[str, int] | None = None,
    cache: DiskCache | UserCache | None = UserCache.DEFAULT,
    usage: Mapping[str, int] | None = None,
) -> CatalogSnapshot:
    """Snapshot the managed part of ``catalog``; ``counter`` defaults to the offline tokenizer.

    ``measured``: contract costs already measured in ``counter``'s unit, by identity (for
    example a plan's entries); only the others are counted here. ``cache``: where a large
    catalog's index is looked up before it is built and stored after (by default the user's
    cache unless ``PTC_PLUS_CACHE=off``; ``None``: always build). The snapshot is equal either way.
    ``usage``: identity → session families that used it, the prior between a search's near ties (ADR 0111).
    """
    disk = chosen_cache(cache)
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
        index=cached_index(managed.capabilities, compiled, disk),
        counter=chosen,
        default_budget=default_budget,
        cache=disk,
        usage=dict(usage or {}),
    )
