"""Discovery: finding capabilities in a catalog, and the ``capabilities.*`` API programs call (ADR 0110).

Lowest first:

- :mod:`.terms` — search terms from names and prose (English and CJK, no model);
- :mod:`.keywords` — the editable keyword index (``keywords.json``: synonyms, Chinese expansions, actions);
- :mod:`.index` — the inverted index over a catalog (weighted fields, pairs, operations; cached on disk);
- :mod:`.query` — query analysis: a query cut into the units the ranker scores;
- :mod:`.semantic`, :mod:`.gloss` — the optional semantic layer and the English gloss of Chinese queries;
- :mod:`.rules` — the public ranking rules: tuning, result types and the rules every computation shares;
- :mod:`.loops` — the ranking in plain Python, the definition; :mod:`.kernel` — the same over numpy arrays;
- :mod:`.ranker` — :func:`~.ranker.ranking`, the one function over both (the kernel for large catalogs where
  numpy is installed, else the loops: the same result);
- :mod:`.snapshot` — the frozen, searchable view of a catalog every call answers from;
- :mod:`.api` — ``search``, ``find``, ``inspect``, ``tree`` and :func:`~.api.call`, which serves them to programs.

It sits above :mod:`ptc_plus.capabilities` (the catalog and contract costs) and below the runtime, which
serves :func:`call` over the control channel.
"""

from __future__ import annotations

from ptc_plus.discovery.api import (
    DEFAULT_SEARCH_LIMIT,
    MAX_PHRASINGS,
    NEXT_CANDIDATES,
    NO_GOOD_MATCH,
    RRF_K,
    call,
    candidate_line,
    explain,
    find,
    inspect,
    resolve,
    search,
    semantic_layer,
    tree,
)
from ptc_plus.discovery.errors import InvalidBudget, InvalidDiscoveryArgument, InvalidKeywordIndex
from ptc_plus.discovery.semantic import ranker_name
from ptc_plus.discovery.snapshot import DEFAULT_DISCOVERY_BUDGET, CatalogSnapshot, build_snapshot

__all__ = [
    "DEFAULT_DISCOVERY_BUDGET",
    "DEFAULT_SEARCH_LIMIT",
    "MAX_PHRASINGS",
    "NEXT_CANDIDATES",
    "NO_GOOD_MATCH",
    "RRF_K",
    "CatalogSnapshot",
    "InvalidBudget",
    "InvalidDiscoveryArgument",
    "InvalidKeywordIndex",
    "build_snapshot",
    "call",
    "candidate_line",
    "explain",
    "find",
    "inspect",
    "ranker_name",
    "resolve",
    "search",
    "semantic_layer",
    "tree",
]
