"""Deterministic lexical ranking: BM25F-style scoring with coverage, and the one function that computes it.

A query is cut into *units* (:mod:`~ptc_plus.discovery.query`). A word or dictionary unit is one
*concept*: a capability scores for it by its best-matching alternative (one term, or the summed words of a
several-word expansion such as "pivot table"), and the terms share the rarity of the commonest of them, so a
rare synonym does not outweigh the plain word. An n-gram unit sums its n-grams. A capability's score sums
its unit scores (the units naming an action at half weight) and is scaled by

- *coverage*: the share of units it matches ("delete branch" prefers both words);
- *action agreement*: the query's action (the action classes of its first
  unit that names any) against the capability's operation (its first name
  word's, else its description's first word's, else a later name word's; ADR
  0099): the same class is rewarded, the same family a little, an exclusive
  family that differs (``read.list`` against ``produce.create``) is penalised
  (with the semantic layer the same comparison also moves each *sibling*'s fused
  score, :func:`~ptc_plus.discovery.rules.operation_bonus`); a capability that
  shares only the verb with a query whose other words match elsewhere is not
  rewarded (the object chooses the service, the verb among its tools; ADR 0111);
- *name share*: the share of the capability's own name words the query names;
- *pairs*: neighbouring query concepts that stand next to each other in its
  name or description.

Equal scores are ordered by identity. :func:`ranking` is the one entry: the loops of
:mod:`~ptc_plus.discovery.loops` are the definition, and where numpy is installed the same scores, bit for
bit, are computed over arrays (:mod:`~ptc_plus.discovery.kernel`) for large catalogs. No model call
is involved (ADR 0023, 0026); with the optional semantic layer (:mod:`~ptc_plus.discovery.semantic`, ADR
0077) :func:`ranking` fuses these scores with a multilingual sentence similarity computed locally and says
whether the best hit is a good match. Under the semantic layer a Chinese query's words the keyword index does
not know are glossed in English from CC-CEDICT (:mod:`~ptc_plus.discovery.gloss`, ADR 0084) and the gloss
is scored beside the query. The tuning and the result types are defined in
:mod:`~ptc_plus.discovery.rules`, which both computations share, and re-exported here.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from functools import cache

from ptc_plus.discovery import loops
from ptc_plus.discovery.index import SearchIndex
from ptc_plus.discovery.query import analyse
from ptc_plus.discovery.rules import (
    ACTION_AGREES,
    ACTION_CONFLICTS,
    ACTION_RELATED,
    GLOSS_LEXICAL_WEIGHT,
    GLOSS_SEMANTIC_WEIGHT,
    NAME_SHARE_WEIGHT,
    SEMANTIC_FLOOR,
    SEMANTIC_WEIGHT,
    Match,
    Ranking,
    action_factor,
    operation_bonus,
)
from ptc_plus.discovery.semantic import SemanticLayer

# The names the docs, benchmarks and tests use through this module (the tuning is defined in rules).
__all__ = [
    "ACTION_AGREES",
    "ACTION_CONFLICTS",
    "ACTION_RELATED",
    "ARRAYS_ABOVE",
    "GLOSS_LEXICAL_WEIGHT",
    "GLOSS_SEMANTIC_WEIGHT",
    "NAME_SHARE_WEIGHT",
    "SEMANTIC_FLOOR",
    "SEMANTIC_WEIGHT",
    "Match",
    "Ranking",
    "action_factor",
    "explain",
    "operation_bonuses",
    "rank",
    "ranking",
    "reference_ranking",
    "uses_arrays",
]


def ranking(
    index: SearchIndex, query: str, *, limit: int | None = None, semantic: SemanticLayer | None = None
) -> Ranking:
    """Capabilities matching ``query``, best first (ties by identity), at most ``limit``, and a verdict.

    Lexical only without ``semantic``; with it, each score is fused with the capability's similarity
    (:data:`SEMANTIC_WEIGHT`) and capabilities no term matches join from :data:`SEMANTIC_FLOOR` up.
    Computed over numpy arrays (:func:`~ptc_plus.discovery.kernel.ranking`) for catalogs above
    :data:`ARRAYS_ABOVE` where numpy is installed, else by :func:`reference_ranking`: the result is the same.
    """
    vectorised = _vectorised() if len(index.identities) > ARRAYS_ABOVE else None
    if vectorised is None:
        return loops.ranking(index, query, limit=limit, semantic=semantic)
    return vectorised(index, query, limit=limit, semantic=semantic)


ARRAYS_ABOVE = 1000
"""Capabilities above which :func:`ranking` computes over arrays: below, the fixed cost of the array calls
exceeds the loops' (measured: 0.15 against 0.13 ms at 307 capabilities, 0.17 against 0.26 ms at 2,000)."""


def uses_arrays(size: int) -> bool:
    """Whether :func:`ranking` over ``size`` capabilities computes over numpy arrays here (else the loops of
    :func:`reference_ranking`)."""
    return size > ARRAYS_ABOVE and _vectorised() is not None


@cache
def _vectorised() -> Callable[..., Ranking] | None:
    # numpy comes with the semantic extra only; the loops need nothing.
    if importlib.util.find_spec("numpy") is None:
        return None
    from ptc_plus.discovery import kernel

    return kernel.ranking


reference_ranking = loops.ranking
""":func:`ranking` computed document by document in plain Python (:func:`ptc_plus.discovery.loops.ranking`):
the definition the arrays and every pruning must match."""


def rank(
    index: SearchIndex, query: str, *, limit: int | None = None, semantic: SemanticLayer | None = None
) -> list[Match]:
    """Capabilities matching ``query``, best first (ties by identity); at most ``limit`` (see :func:`ranking`)."""
    return list(ranking(index, query, limit=limit, semantic=semantic).matches)


def operation_bonuses(index: SearchIndex, query: str) -> dict[str, float]:
    """What the query's operation added to each sibling's fused score under the semantic layer (ADR 0099),
    by identity; capabilities it left alone are absent."""
    found = operation_bonus(index, analyse(query, index.keywords, index.exact))
    return {index.identities[doc]: bonus for doc, bonus in found.items()}


def explain(index: SearchIndex, query: str, identity: str) -> list[str]:
    """The query terms that matched ``identity``'s document, one entry per query unit that matched it."""
    try:
        doc = index.identities.index(identity)
    except ValueError:
        return []
    found: list[str] = []
    for unit in analyse(query, index.keywords, index.exact):
        hits = sorted(t for t in unit.terms if any(d == doc for d, _ in index.postings.get(t, ())))
        if hits:
            found.append("/".join(hits))
    if doc in index.exact.get(query.strip().lower(), ()):
        found.append("=name")
    return found
