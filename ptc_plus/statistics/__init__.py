"""Usage statistics by session family: samples, the store of each scope, coverage, carry-over.

- :mod:`.sample` — what a settled family contributes (:class:`Evidence`, :class:`FamilySample`);
- :mod:`.store` — one scope's file: locked idempotent upserts, bounded, damage that loses the vote;
- :mod:`.intake` — samples waiting beside the store for its lock, folded by the next writer (ADR 0091);
- :mod:`.upsert` — folding a sample into the payload, and the bounds; :mod:`.view` — what a read found;
- :mod:`.shapes` — learned output shapes: a result's JSON shape, never a value, and their union (ADR 0102);
- :mod:`.revisions` — which samples still count after a contract revision changed (ADR 0066);
- :mod:`.codec` — the versioned file format and its migration from version 0;
- :mod:`.errors` — PTC-5xxx;
- :mod:`.observe` — the family observer: host facts in, samples recorded at settlement.

Observation of host facts (S3's ``observe``) builds samples; session start reads the stores.
"""

from __future__ import annotations

from ptc_plus.statistics.errors import (
    StatisticsError,
    StatisticsMissing,
    StatisticsStoreCorrupt,
    StatisticsStoreFutureVersion,
    StatisticsStoreUnwritable,
)
from ptc_plus.statistics.observe import (
    AgentOffers,
    FamilyObserver,
    Offer,
    Settled,
    real_workspace,
    record_settled,
)
from ptc_plus.statistics.revisions import carries_over, schema_revision_of, tool_schema_revision
from ptc_plus.statistics.sample import DISCLOSURES, Disclosure, Evidence, FamilySample
from ptc_plus.statistics.shapes import derive as derive_shape
from ptc_plus.statistics.shapes import merge as merge_shapes
from ptc_plus.statistics.shapes import summary as shape_summary
from ptc_plus.statistics.store import (
    DEFAULT_RETENTION,
    FILE_NAME,
    NO_SAMPLE,
    CapabilityStats,
    StatisticsStore,
    Status,
    StoreView,
    user_store,
    workspace_store,
)
from ptc_plus.statistics.view import LearnedShape

__all__ = [
    "DEFAULT_RETENTION",
    "DISCLOSURES",
    "FILE_NAME",
    "NO_SAMPLE",
    "AgentOffers",
    "CapabilityStats",
    "Disclosure",
    "Evidence",
    "FamilyObserver",
    "FamilySample",
    "LearnedShape",
    "Offer",
    "Settled",
    "StatisticsError",
    "StatisticsMissing",
    "StatisticsStore",
    "StatisticsStoreCorrupt",
    "StatisticsStoreFutureVersion",
    "StatisticsStoreUnwritable",
    "Status",
    "StoreView",
    "carries_over",
    "derive_shape",
    "merge_shapes",
    "real_workspace",
    "record_settled",
    "schema_revision_of",
    "shape_summary",
    "tool_schema_revision",
    "user_store",
    "workspace_store",
]
