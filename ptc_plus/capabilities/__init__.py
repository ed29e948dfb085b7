"""Capabilities: the catalog, contract cost, search and the discovery API.

- :mod:`.capability` — the value types: identities, kinds, revisions, unmanaged marking;
- :mod:`.catalog` — everything offered, sorted and checked unique;
- :mod:`.contract` — delivered contract text (shared types once);
- :mod:`.cost` — tokens of delivered text, unit named;
- :mod:`.terms`, :mod:`.keywords`, :mod:`.index`, :mod:`.query_units`, :mod:`.search`, :mod:`.ranking_rules`,
  :mod:`.ranking_arrays` — lexical ranking, fused with :mod:`.semantic` and :mod:`.gloss` when the extra is in;
- :mod:`.snapshot`, :mod:`.discovery` — what programs call as ``capabilities.*``;
- :mod:`.disk_cache` — derived catalog data kept across sessions (ADR 0078).
"""

from __future__ import annotations

from ptc_plus.capabilities import discovery
from ptc_plus.capabilities.capability import (
    Capability,
    CapabilityKind,
    ResourceEntry,
    ResourceSource,
    UnmanagedKind,
    tool_identity,
)
from ptc_plus.capabilities.catalog import Catalog, build_catalog
from ptc_plus.capabilities.contract import delivery_text
from ptc_plus.capabilities.cost import Cost, DeferredCounter, choose_counter, measure, offline_counter
from ptc_plus.capabilities.disk_cache import CACHE_DIR_ENV, DiskCache, cache_directory, default_cache
from ptc_plus.capabilities.errors import CatalogUnavailable, InvalidBudget, InvalidDiscoveryArgument
from ptc_plus.capabilities.semantic import ranker_name
from ptc_plus.capabilities.snapshot import DEFAULT_DISCOVERY_BUDGET, CatalogSnapshot, build_snapshot

__all__ = [
    "CACHE_DIR_ENV",
    "DEFAULT_DISCOVERY_BUDGET",
    "Capability",
    "CapabilityKind",
    "Catalog",
    "CatalogSnapshot",
    "CatalogUnavailable",
    "Cost",
    "DeferredCounter",
    "DiskCache",
    "InvalidBudget",
    "InvalidDiscoveryArgument",
    "ResourceEntry",
    "ResourceSource",
    "UnmanagedKind",
    "build_catalog",
    "build_snapshot",
    "cache_directory",
    "choose_counter",
    "default_cache",
    "delivery_text",
    "discovery",
    "measure",
    "offline_counter",
    "ranker_name",
    "tool_identity",
]
