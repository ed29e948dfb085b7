"""Capabilities: the catalog and what its contracts cost.

- :mod:`.kinds` — the table of capability kinds: identity prefix, delivery, reach, observed (ADR 0122);
- :mod:`.capability` — the value types: identities, revisions, unmanaged marking;
- :mod:`.catalog` — everything offered, sorted and checked unique;
- :mod:`.contract` — delivered contract text (shared types once);
- :mod:`.cost` — tokens of delivered text, unit named (:mod:`.o200k`: the shipped tokenizer);
- :mod:`.disk_cache` — derived catalog data kept across sessions (ADR 0078).

Searching a catalog — the index, query analysis, ranking and the ``capabilities.*`` API programs call — is
:mod:`ptc_plus.discovery`, the layer above this one (ADR 0110).
"""

from __future__ import annotations

from ptc_plus.capabilities.capability import (
    Capability,
    ResourceEntry,
    ResourceSource,
    UnmanagedKind,
    tool_identity,
)
from ptc_plus.capabilities.catalog import Catalog, build_catalog
from ptc_plus.capabilities.contract import ToolTally, delivery_text
from ptc_plus.capabilities.cost import (
    Cost,
    DeferredCounter,
    choose_counter,
    line_counter,
    measure,
    offline_counter,
)
from ptc_plus.capabilities.disk_cache import (
    CACHE_DIR_ENV,
    DiskCache,
    UserCache,
    cache_directory,
    cache_key,
    chosen_cache,
    default_cache,
)
from ptc_plus.capabilities.errors import CatalogUnavailable
from ptc_plus.capabilities.kinds import (
    KINDS,
    CapabilityKind,
    Delivery,
    KindRow,
    Reach,
    as_kind,
    kind_row,
    kinds_delivered,
    kinds_reached,
    observed_kinds,
    tool_kind,
)

__all__ = [
    "CACHE_DIR_ENV",
    "KINDS",
    "Capability",
    "CapabilityKind",
    "Catalog",
    "CatalogUnavailable",
    "Cost",
    "DeferredCounter",
    "Delivery",
    "DiskCache",
    "KindRow",
    "Reach",
    "ResourceEntry",
    "ResourceSource",
    "ToolTally",
    "UnmanagedKind",
    "UserCache",
    "as_kind",
    "build_catalog",
    "cache_directory",
    "cache_key",
    "choose_counter",
    "chosen_cache",
    "default_cache",
    "delivery_text",
    "kind_row",
    "kinds_delivered",
    "kinds_reached",
    "line_counter",
    "measure",
    "observed_kinds",
    "offline_counter",
    "tool_identity",
    "tool_kind",
]
