"""Usage statistics by session family: samples, the store of each scope, coverage, carry-over.

- :mod:`.sample` — what a settled family contributes (:class:`Evidence`, :class:`FamilySample`);
- :mod:`.store` — one scope's file: locked idempotent upserts, bounded, damage that loses the vote;
- :mod:`.intake` — samples waiting beside the store for its lock, folded by the next writer (ADR 0091);
- :mod:`.upsert` — folding a sample into the payload, and the bounds; :mod:`.view` — what a read found;
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
    "real_workspace",
    "record_settled",
    "schema_revision_of",
    "tool_schema_revision",
    "user_store",
    "workspace_store",
]
