"""The inverted index over a catalog: weighted fields, per-term postings.

Each capability is a document with fields: its name (and identity words),
source, parameter names, description and keywords from the keyword index.
A posting stores the field-weighted, length-normalised term frequency
(BM25F style), so ranking is a sum over query terms.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence

import attrs

from ptc_plus.capabilities.catalog import Capability
from ptc_plus.capabilities.keywords import CompiledKeywords
from ptc_plus.capabilities.terms import terms
from ptc_plus.sdk.naming import words

FIELD_WEIGHTS: Mapping[str, float] = {
    "name": 3.0,
    "keywords": 2.0,
    "parameters": 1.2,
    "source": 1.0,
    "description": 1.0,
}
LENGTH_NORMALISATION = 0.6


@attrs.frozen(kw_only=True)
class SearchIndex:
    """Postings ``term → ((doc, weight), ...)`` over :attr:`identities` (catalog order)."""

    identities: tuple[str, ...]
    names: tuple[str, ...]
    postings: Mapping[str, tuple[tuple[int, float], ...]]
    idf: Mapping[str, float]
    exact: Mapping[str, tuple[int, ...]]
    """Lower-cased names and identities → documents (for exact-name look-ups)."""
    keywords: CompiledKeywords = attrs.field(eq=False)


def _name_terms(text: str) -> list[str]:
    return [t for w in words(text) for t in terms(w)]


def document_fields(capability: Capability, keywords: CompiledKeywords) -> dict[str, list[str]]:
    """The searchable fields of one capability, as term lists."""
    return {
        "name": _name_terms(capability.name),
        "source": _name_terms(capability.source),
        "parameters": [t for p in capability.parameters for t in _name_terms(p)],
        "description": terms(capability.description),
        "keywords": list(keywords.capability_terms.get(capability.identity, ())),
    }


def build_index(capabilities: Sequence[Capability], keywords: CompiledKeywords) -> SearchIndex:
    """Index ``capabilities`` (their order is kept: it is the final tie-break after identity)."""
    fields = [document_fields(c, keywords) for c in capabilities]
    averages = {f: max(1.0, sum(len(doc[f]) for doc in fields) / max(1, len(fields))) for f in FIELD_WEIGHTS}
    postings: dict[str, list[tuple[int, float]]] = {}
    for doc_id, doc in enumerate(fields):
        weighted: dict[str, float] = {}
        for field, weight in FIELD_WEIGHTS.items():
            length = len(doc[field])
            if not length:
                continue
            norm = 1 - LENGTH_NORMALISATION + LENGTH_NORMALISATION * length / averages[field]
            for term, count in Counter(doc[field]).items():
                weighted[term] = weighted.get(term, 0.0) + weight * count / norm
        for term in sorted(weighted):
            postings.setdefault(term, []).append((doc_id, weighted[term]))
    total = len(capabilities)
    idf = {t: math.log(1 + (total - len(p) + 0.5) / (len(p) + 0.5)) for t, p in postings.items()}
    exact: dict[str, list[int]] = {}
    for doc_id, capability in enumerate(capabilities):
        for key in dict.fromkeys((capability.name.lower(), capability.identity.lower())):
            exact.setdefault(key, []).append(doc_id)
    return SearchIndex(
        exact={k: tuple(v) for k, v in exact.items()},
        identities=tuple(c.identity for c in capabilities),
        names=tuple(c.name for c in capabilities),
        postings={t: tuple(p) for t, p in postings.items()},
        idf=idf,
        keywords=keywords,
    )
