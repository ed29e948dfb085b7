"""The ranking of :mod:`~ptc_plus.discovery.loops` over numpy arrays: the same scores, bit for bit.

At 10,000 capabilities a common query word matches thousands of documents, and the per-document Python work of
the loops in :mod:`~ptc_plus.discovery.loops` was most of a search. Here each step is one array operation over
the whole catalog, in the same order of float operations per document as the loops (IEEE addition,
multiplication and division are exact to the last bit elementwise, and multiplying by exactly 1.0 or adding
0.0 leaves a value unchanged), so every score is bit for bit the loops' and rankings are byte-identical
(tests/ptc_plus/discovery/test_fast_paths.py compares the two over random catalogs and queries, and over every
labelled query). The loops stay the definition and the path used without numpy, which only the optional
semantic extra installs: :func:`ptc_plus.discovery.ranker.ranking` imports this module only where numpy is
installed, and numpy is imported here only inside the functions. Arrays derived from the index are built on
first use and kept in ``SearchIndex.derived``; they hold no tuning constant (those are read from
:mod:`~ptc_plus.discovery.rules` on every call, as the loops read them).
"""

from __future__ import annotations

import heapq
from typing import Any

from ptc_plus.discovery.index import SearchIndex
from ptc_plus.discovery.query import Unit, analyse
from ptc_plus.discovery.rules import (
    ACTION_UNIT_WEIGHT,
    CONCEPT_FLOOR,
    COVERAGE_FLOOR,
    EXACT_NAME_BONUS,
    GLOSS_LEXICAL_WEIGHT,
    GLOSS_SEMANTIC_WEIGHT,
    K1,
    NAME_SHARE_WEIGHT,
    OPERATION_WEIGHT,
    PAIR_WEIGHT,
    ROUNDING_MARGIN,
    SEMANTIC_FLOOR,
    SEMANTIC_WEIGHT,
    Match,
    Ranking,
    action_factor,
    concept_terms,
    derived_memo,
    is_confident,
    query_gloss,
)
from ptc_plus.discovery.semantic import SemanticLayer

Array = Any
"""A numpy array (numpy's own types are not worth mypy's time here)."""


def _posting_arrays(index: SearchIndex, term: str) -> tuple[Array, Array]:
    """Documents and weights of a term's postings."""
    import numpy as np

    memo = derived_memo(index, "postings")
    found = memo.get(term)
    if found is None:
        entries = index.postings[term]
        docs = np.fromiter((d for d, _ in entries), dtype=np.intp, count=len(entries))
        weights = np.fromiter((w for _, w in entries), dtype=np.float64, count=len(entries))
        found = memo[term] = (docs, weights)
    return found


def _pair_arrays(index: SearchIndex, first: str, second: str) -> tuple[Array, Array] | None:
    """Documents and field weights of an indexed pair, or ``None`` (the memo holds only pairs that exist,
    so arbitrary queries do not grow it)."""
    import numpy as np

    entries = index.pairs.get(first, {}).get(second)
    if not entries:
        return None
    memo = derived_memo(index, "pairs")
    found = memo.get((first, second))
    if found is None:
        found = memo[first, second] = (
            np.fromiter((d for d, _ in entries), dtype=np.intp, count=len(entries)),
            np.fromiter((f for _, f in entries), dtype=np.float64, count=len(entries)),
        )
    return found


def _named_by_array(index: SearchIndex, term: str) -> Array | None:
    import numpy as np

    entries = index.named_by.get(term)
    if not entries:
        return None
    memo = derived_memo(index, "named-by")
    found = memo.get(term)
    if found is None:
        found = memo[term] = np.asarray(entries, dtype=np.intp)
    return found


def _catalog_arrays(index: SearchIndex) -> tuple[Array, tuple[frozenset[str], ...], Array]:
    """Per document: the number of its distinct action class set, those sets, and its name-word count."""
    import numpy as np

    memo = derived_memo(index, "catalog")
    found = memo.get("catalog")
    if found is None:
        numbers: dict[frozenset[str], int] = {}
        ids = np.fromiter((numbers.setdefault(a, len(numbers)) for a in index.actions), dtype=np.intp)
        lengths = np.fromiter((len(w) for w in index.name_words), dtype=np.float64, count=len(index.name_words))
        found = memo["catalog"] = (ids, tuple(numbers), np.maximum(lengths, 1.0))
    return found


def _unit_score_array(index: SearchIndex, unit: Unit, size: int) -> tuple[Array, Array]:
    """:func:`~ptc_plus.discovery.loops._unit_scores` as (score per document, whether it is a key)."""
    import numpy as np

    scores = np.zeros(size)
    hit = np.zeros(size, dtype=bool)
    present = sorted(t for t in unit.terms if t in index.postings)
    saturation = K1 + 1
    if not unit.concept:
        held = np.zeros(size, dtype=np.intp) if unit.whole else None
        for term in present:
            factor = unit.terms[term] * index.idf[term] * saturation
            docs, weights = _posting_arrays(index, term)
            scores[docs] += factor * weights / (weights + K1)
            hit[docs] = True
            if held is not None:
                held[docs] += 1
        if held is not None:
            hit &= held == len(unit.terms)
            scores[~hit] = 0.0
        return scores, hit
    rarity = min((index.idf[t] for t in present if unit.terms[t] >= CONCEPT_FLOOR), default=None)
    phrased = {t for phrase in unit.phrases for t in phrase} if unit.phrases else set()
    values: dict[str, tuple[Array, Array]] = {}
    for term in present:
        factor = unit.terms[term] * (index.idf[term] if rarity is None else min(rarity, index.idf[term])) * saturation
        docs, weights = _posting_arrays(index, term)
        value = factor * weights / (weights + K1)
        if term in phrased:
            values[term] = (docs, value)
        # Every value is positive, so the loops' "replace when greater" is a maximum.
        scores[docs] = np.maximum(scores[docs], value)
        hit[docs] = True
    for phrase in unit.phrases:
        summed = np.zeros(size)
        for term in phrase:
            if term in values:
                docs, value = values[term]
                summed[docs] += value
        np.maximum(scores, summed, out=scores)
    return scores, hit


def _pair_score_array(index: SearchIndex, units: list[Unit], size: int) -> Array:
    """:func:`~ptc_plus.discovery.loops._pair_scores` as an array (0 where a document holds no pair)."""
    import numpy as np

    concepts = [concept_terms(u) for u in units if u.concept]
    weights = [u.terms for u in units if u.concept]
    scores = np.zeros(size)
    for n in range(len(concepts) - 1):
        best: Array | None = None
        for a in concepts[n]:
            if not index.pairs.get(a):
                continue
            for b in concepts[n + 1]:
                found = _pair_arrays(index, a, b)
                if found is None:
                    continue
                docs, fields = found
                if best is None:
                    best = np.zeros(size)
                weight = weights[n][a] * weights[n + 1][b]
                best[docs] = np.maximum(best[docs], weight * fields)
        if best is not None:
            scores += best
    return scores


def _operation_bonus_array(index: SearchIndex, units: list[Unit]) -> tuple[Array, Array] | None:
    """:func:`~ptc_plus.discovery.rules.operation_bonus` as (its documents in order, their bonuses), or
    ``None`` where it is empty: the same siblings, the same ``OPERATION_WEIGHT * (factor - 1.0)`` per
    document (one float subtraction and one multiplication, elementwise), without a Python set of them."""
    import numpy as np

    verb = next((u for u in units if u.actions), None)
    if verb is None or not OPERATION_WEIGHT:
        return None
    siblings = np.zeros(len(index.identities), dtype=bool)
    for unit in units:
        if unit is not verb:
            for term, weight in unit.terms.items():
                if (weight >= CONCEPT_FLOOR or not unit.concept) and term in index.postings:
                    siblings[_posting_arrays(index, term)[0]] = True
    ids, offered, _ = _catalog_arrays(index)
    factors = np.array([action_factor(verb.actions, o) for o in offered], dtype=np.float64)[ids]
    chosen = np.flatnonzero(siblings & (factors != 1.0))
    if not len(chosen):
        return None
    return chosen, OPERATION_WEIGHT * (factors[chosen] - 1.0)


def lexical(index: SearchIndex, query: str) -> tuple[Array, Array]:
    """:func:`~ptc_plus.discovery.loops.lexical_scores` as (score per document, whether it matched).

    Scores of documents that did not match are 0.
    """
    return _lexical(index, query, analyse(query, index.keywords, index.exact))


def _lexical(index: SearchIndex, query: str, units: list[Unit]) -> tuple[Array, Array]:
    """:func:`lexical` of ``query`` already analysed into ``units`` (analysis is a pure function of the query
    and the index, so the ranking analyses once for the scores and the operation bonus)."""
    import numpy as np

    size = len(index.identities)
    verb = next((u for u in units if u.actions), None)
    totals = np.zeros(size)
    matched = np.zeros(size, dtype=np.intp)
    member = np.zeros(size, dtype=bool)
    objects = np.zeros(size, dtype=bool)
    for unit in units:
        weight = ACTION_UNIT_WEIGHT if unit.actions else 1.0
        scores, hit = _unit_score_array(index, unit, size)
        totals += weight * scores
        matched += hit
        member |= hit
        if unit is not verb:
            objects |= hit
    for doc in index.exact.get(query.strip().lower(), ()):
        totals[doc] += EXACT_NAME_BONUS
        matched[doc] = max(int(matched[doc]), len(units))
        member[doc] = True
    if not member.any():
        return totals, member
    count = max(1, len(units))
    coverage = np.array([COVERAGE_FLOOR + (1 - COVERAGE_FLOOR) * min(1.0, m / count) for m in range(count + 1)])
    score = totals * coverage[matched]
    ids, offered, lengths = _catalog_arrays(index)
    if verb is not None:
        factors = np.array([action_factor(verb.actions, o) for o in offered])[ids]
        if objects.any():  # as the loops: only the object's documents are rewarded for the verb
            factors = np.where(objects, factors, np.minimum(factors, 1.0))
        score *= factors
    named = np.zeros(size)
    for term in {t for u in units if u.concept for t, w in u.terms.items() if w >= CONCEPT_FLOOR}:
        docs = _named_by_array(index, term)
        if docs is not None:
            named[docs] += 1
    score *= 1 + NAME_SHARE_WEIGHT * named / lengths
    pair_scale = PAIR_WEIGHT / max(1, sum(1 for u in units if u.concept) - 1)
    score *= 1 + pair_scale * _pair_score_array(index, units, size)
    member &= totals > 0
    score[~member] = 0.0
    return score, member


def ranking(index: SearchIndex, query: str, *, limit: int | None, semantic: SemanticLayer | None) -> Ranking:
    """:func:`~ptc_plus.discovery.loops.ranking` over arrays: the same :class:`Ranking`, bit for bit.

    Only the candidates that can reach the top ``limit`` (the same bound the loops use) become Python
    values, and they are rounded by Python's ``round`` as the loops round them.
    """
    import numpy as np

    units = analyse(query, index.keywords, index.exact)
    score, member = _lexical(index, query, units)
    best_lexical = float(score[member].max()) if member.any() else 0.0
    similarities: Array | None = None
    gloss = query_gloss(index, query, semantic)
    gloss_score: Array | None = None
    gloss_similarities: Array | None = None
    if semantic is None:
        fused, keep = score, member
    else:
        # The query's and the gloss's similarities in one pass over the catalog's vectors (ADR 0132).
        similarities, *rest = semantic.similarity_arrays([query, gloss] if gloss else [query])
        scale = 1.0 / best_lexical if best_lexical > 0 else 0.0
        fused = score * scale + SEMANTIC_WEIGHT * similarities
        keep = member | (similarities >= SEMANTIC_FLOOR)
        if gloss:
            gloss_score, gloss_member = lexical(index, gloss)
            gloss_similarities = rest[0]
            best_gloss = float(gloss_score[gloss_member].max()) if gloss_member.any() else 0.0
            gloss_scale = 1.0 / best_gloss if best_gloss > 0 else 0.0
            fused = fused + (
                GLOSS_LEXICAL_WEIGHT * (gloss_score * gloss_scale) + GLOSS_SEMANTIC_WEIGHT * gloss_similarities
            )
            keep = keep | gloss_member | (gloss_similarities >= SEMANTIC_FLOOR)
        bonus = _operation_bonus_array(index, units)
        if bonus is not None:  # the loops add it to the same documents after the gloss
            chosen, values = bonus
            fused[chosen] += values
    docs = np.flatnonzero(keep)
    values = fused[docs]
    total = len(docs)
    if limit is not None and total > limit:
        floor = float(np.partition(values, total - limit)[total - limit]) - ROUNDING_MARGIN
        chosen = values >= floor
        docs, values = docs[chosen], values[chosen]
    identities = index.identities
    scored = [
        (-round(value, 9), identities[doc], doc) for doc, value in zip(docs.tolist(), values.tolist(), strict=True)
    ]
    best = sorted(scored) if limit is None else heapq.nsmallest(limit, scored)
    matches = tuple(
        Match(
            identity=identity,
            score=-negative,
            lexical=round(float(score[doc]), 9),
            similarity=None if similarities is None else float(similarities[doc]),
            gloss_lexical=None if gloss_score is None else round(float(gloss_score[doc]), 9),
            gloss_similarity=None if gloss_similarities is None else float(gloss_similarities[doc]),
        )
        for negative, identity, doc in best
    )
    return Ranking(
        matches=matches,
        confident=is_confident(matches, best_lexical),
        total=total,
        gloss=gloss if gloss_similarities is not None else "",
    )
