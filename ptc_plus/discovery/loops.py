"""The lexical ranking computed document by document in plain Python: the definition.

:func:`ranking` here is what every fast path must reproduce byte for byte: the numpy kernel
(:mod:`~ptc_plus.discovery.kernel`) and the pruning of documents that provably cannot reach a limit
(:func:`lexical_top`, the key floor below). :func:`ptc_plus.discovery.ranker.ranking` chooses between this
and the kernel; ``tests/ptc_plus/discovery/test_fast_paths.py`` checks every fast path against the full
computation. The scoring is explained in :mod:`~ptc_plus.discovery.ranker`; the tuning, the result types and
the rules both computations share are :mod:`~ptc_plus.discovery.rules`.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable

import attrs

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
    operation_bonus,
    query_gloss,
)
from ptc_plus.discovery.semantic import SemanticLayer


@attrs.frozen(kw_only=True)
class _Scored:
    """One query unit's scores: the documents it matches, each one's score in ``scores`` (a list indexed by
    document), the unit's weight in the total, and bounds every one of those scores lies within."""

    weight: float
    scores: list[float]
    docs: set[int]
    high: float
    low: float


def _unit_scores(index: SearchIndex, unit: Unit, size: int) -> _Scored:
    """The documents ``unit`` matches and their unit scores (see :class:`_Scored`).

    Lists indexed by document, not dictionaries: at 10,000 capabilities a common word's postings run into
    thousands, and the dictionary look-ups per posting were most of a search without numpy. A score starts
    at 0.0, and 0.0 + x is x and every x is positive, so the sums and maxima are those of the dictionaries.
    The bounds come from each term's smallest and largest posting weight (``x / (x + K1)`` grows with x).
    """
    scores = [0.0] * size
    docs: set[int] = set()
    present = sorted(t for t in unit.terms if t in index.postings)
    saturation = K1 + 1
    k1 = K1
    weight = ACTION_UNIT_WEIGHT if unit.actions else 1.0
    highs: dict[str, float] = {}
    lows: list[float] = []
    if not unit.concept:
        held = [0] * size if unit.whole else None
        for term in present:
            factor = unit.terms[term] * index.idf[term] * saturation
            if not docs:  # the first term: nothing to add to yet (0.0 + x is x)
                for doc, weight_in_doc in index.postings[term]:
                    scores[doc] = factor * weight_in_doc / (weight_in_doc + k1)
            else:
                for doc, weight_in_doc in index.postings[term]:
                    scores[doc] += factor * weight_in_doc / (weight_in_doc + k1)
            column, least, most = _posting_columns(index, term)
            highs[term] = factor * most / (most + k1)
            lows.append(factor * least / (least + k1))
            docs.update(column)
            if held is not None:
                for doc in column:
                    held[doc] += 1
        if held is not None:
            docs = {doc for doc in docs if held[doc] == len(unit.terms)}
        return _Scored(weight=weight, scores=scores, docs=docs, high=sum(highs.values()), low=min(lows, default=0.0))
    rarity = min((index.idf[t] for t in present if unit.terms[t] >= CONCEPT_FLOOR), default=None)
    phrased = {t for phrase in unit.phrases for t in phrase} if unit.phrases else set()
    values: dict[str, dict[int, float]] = {}
    for term in present:
        factor = unit.terms[term] * (index.idf[term] if rarity is None else min(rarity, index.idf[term])) * saturation
        if phrased and term in phrased:
            values[term] = {doc: factor * w / (w + k1) for doc, w in index.postings[term]}
        if not docs:  # the first term: every (positive) value beats the 0.0 there
            for doc, weight_in_doc in index.postings[term]:
                scores[doc] = factor * weight_in_doc / (weight_in_doc + k1)
        else:
            for doc, weight_in_doc in index.postings[term]:
                value = factor * weight_in_doc / (weight_in_doc + k1)
                if value > scores[doc]:
                    scores[doc] = value
        column, least, most = _posting_columns(index, term)
        highs[term] = factor * most / (most + k1)
        lows.append(factor * least / (least + k1))
        docs.update(column)
    for phrase in unit.phrases:
        summed: dict[int, float] = {}
        for term in phrase:
            for doc, value in values.get(term, {}).items():
                summed[doc] = summed.get(doc, 0.0) + value
        for doc, value in summed.items():
            if value > scores[doc]:
                scores[doc] = value
    high = max([*highs.values(), *(sum(highs.get(t, 0.0) for t in phrase) for phrase in unit.phrases)], default=0.0)
    return _Scored(weight=weight, scores=scores, docs=docs, high=high, low=min(lows, default=0.0))


def _posting_columns(index: SearchIndex, term: str) -> tuple[tuple[int, ...], float, float]:
    """The documents of a term's postings, and its smallest and largest weight (derived on first use and
    kept, as the arrays of :mod:`~ptc_plus.discovery.kernel` are)."""
    memo = derived_memo(index, "posting-columns")
    found: tuple[tuple[int, ...], float, float] | None = memo.get(term)
    if found is None:
        entries = index.postings[term]
        weights = [w for _, w in entries]
        found = memo[term] = (tuple(doc for doc, _ in entries), min(weights), max(weights))
    return found


def _pair_scores(index: SearchIndex, units: list[Unit], scores: list[float]) -> float:
    """Adds to ``scores`` (one per document), over neighbouring concept units, the weight of their best pair
    a document holds; returns a bound no document's sum exceeds (the sum of each neighbourhood's best)."""
    concepts = [concept_terms(u) for u in units if u.concept]
    weights = [u.terms for u in units if u.concept]
    most = 0.0
    for n in range(len(concepts) - 1):
        best = [0.0] * len(scores)  # a list by document, as in _unit_scores (0.0: no pair yet)
        touched: set[int] = set()
        for a in concepts[n]:
            neighbours = index.pairs.get(a)
            if not neighbours:
                continue
            for b in concepts[n + 1]:
                entries = neighbours.get(b)
                if not entries:
                    continue
                weight = weights[n][a] * weights[n + 1][b]
                for doc, field in entries:
                    if weight * field > best[doc]:
                        best[doc] = weight * field
                touched.update(_pair_docs(index, a, b))
        for doc in touched:
            scores[doc] += best[doc]
        most += max(map(best.__getitem__, touched), default=0.0)
    return most


def _pair_docs(index: SearchIndex, first: str, second: str) -> tuple[int, ...]:
    """The documents of an indexed pair (derived on first use and kept)."""
    memo = derived_memo(index, "pair-docs")
    found: tuple[int, ...] | None = memo.get((first, second))
    if found is None:
        found = memo[first, second] = tuple(doc for doc, _ in index.pairs[first][second])
    return found


@attrs.frozen(kw_only=True)
class _Parts:
    """A query's lexical factors per document (lists indexed by document), not yet multiplied.

    ``totals`` and ``matched`` hold only the documents :func:`_accumulate` was given. ``most`` bounds a
    document's score over its total times its coverage from above: agreement and pairs at their largest and
    the name share at 1 (the name words a query names are among the document's own, as ``named_by`` holds
    a document under each of its name words and no other).
    """

    units: tuple[_Scored, ...]
    exact: tuple[int, ...]
    members: set[int]
    totals: list[float]
    matched: list[int]
    coverage: list[float]
    agreement: list[float]
    capped: list[float]
    """The agreement of a document the query's object did not match: no reward, a conflict still costs."""
    objects: set[int] | None
    """The documents a unit other than the verb's matched, ``None`` when it matched none (then every
    document gets its full agreement: the verb alone decides)."""
    kinds: tuple[int, ...]
    named: list[float]
    lengths: tuple[float, ...]
    pairs: list[float]
    pair_scale: float
    most: float


def _parts(index: SearchIndex, query: str) -> _Parts:
    units = analyse(query, index.keywords, index.exact)
    verb = next((u for u in units if u.actions), None)
    size = len(index.identities)
    scored = tuple(_unit_scores(index, unit, size) for unit in units)
    exact = index.exact.get(query.strip().lower(), ())
    members: set[int] = set(exact)
    for unit_scores in scored:
        members.update(unit_scores.docs)
    count = max(1, len(units))
    coverage = [COVERAGE_FLOOR + (1 - COVERAGE_FLOOR) * min(1.0, m / count) for m in range(count + 1)]
    pairs = [0.0] * size
    paired = _pair_scores(index, units, pairs)
    pair_scale = PAIR_WEIGHT / max(1, sum(1 for u in units if u.concept) - 1)
    named = [0.0] * size  # floats, as the lengths: float arithmetic, exactly the same values
    for term in {t for u in units if u.concept for t, w in u.terms.items() if w >= CONCEPT_FLOOR}:
        for doc in index.named_by.get(term, ()):
            named[doc] += 1.0
    kinds, offered, lengths = _catalog_lists(index)
    agreement = [1.0 if verb is None else action_factor(verb.actions, o) for o in offered]
    # The object chooses the service, the verb among its tools (ADR 0026, 0111): a document that shares
    # only the verb with the query is not rewarded for performing it over the object's own tools.
    others = [s.docs for u, s in zip(units, scored, strict=True) if u is not verb] if verb is not None else []
    objects = set().union(*others) if any(others) else None
    return _Parts(
        units=scored,
        exact=exact,
        members=members,
        totals=[0.0] * size,
        matched=[0] * size,
        coverage=coverage,
        agreement=agreement,
        capped=[min(1.0, a) for a in agreement],
        objects=objects,
        kinds=kinds,
        named=named,
        lengths=lengths,
        pairs=pairs,
        pair_scale=pair_scale,
        most=max(agreement, default=1.0) * (1 + NAME_SHARE_WEIGHT) * (1 + pair_scale * paired),
    )


def _accumulate(parts: _Parts, docs: set[int]) -> None:
    """Sums the unit scores of ``docs`` (each given once) into ``parts.totals`` and counts their units."""
    totals, matched = parts.totals, parts.matched
    whole = docs is parts.members
    # Each document gains once per unit, in unit order: the sum does not depend on document order.
    for unit in parts.units:
        weight, scores = unit.weight, unit.scores
        for doc in unit.docs if whole else unit.docs & docs:
            totals[doc] += weight * scores[doc]
            matched[doc] += 1
    for doc in parts.exact:
        if doc in docs:
            totals[doc] += EXACT_NAME_BONUS
            matched[doc] = max(matched[doc], len(parts.units))


def _scores(parts: _Parts, docs: Iterable[int]) -> dict[int, float]:
    """The lexical score of each of ``docs`` (accumulated) whose total is positive."""
    totals, matched, coverage, agreement = parts.totals, parts.matched, parts.coverage, parts.agreement
    kinds, named, lengths, pairs = parts.kinds, parts.named, parts.lengths, parts.pairs
    capped, objects = parts.capped, parts.objects
    share, pair_scale = NAME_SHARE_WEIGHT, parts.pair_scale
    # The factors in the order the module docstring lists them, multiplied left to right in one pass. A
    # document no verb, name word or pair concerns is multiplied by exactly 1.0 there (1 + 0.0), which
    # leaves its score unchanged: the scores are those of applying each factor only where it bites.
    return {
        doc: totals[doc]
        * coverage[matched[doc]]
        * (agreement[kinds[doc]] if objects is None or doc in objects else capped[kinds[doc]])
        * (1.0 + share * named[doc] / lengths[doc])
        * (1.0 + pair_scale * pairs[doc])
        for doc in docs
        if totals[doc] > 0.0
    }


def lexical_scores(index: SearchIndex, query: str) -> dict[int, float]:
    """Each matching document's lexical score (unrounded)."""
    parts = _parts(index, query)
    _accumulate(parts, parts.members)
    return _scores(parts, parts.members)


_BOUND_MARGIN = 1e-9
"""Relative slack on the score bounds of :func:`lexical_top`, far above the float error of a few operations."""


def lexical_top(index: SearchIndex, query: str, limit: int) -> tuple[dict[int, float], int]:
    """The lexical scores of at least every document that can rank in the top ``limit`` (ties and the
    rounding to 9 decimals included), and how many documents match: :func:`lexical_scores` without scoring the
    documents that provably cannot rank.

    At 10,000 capabilities a common word ("查看", "create") matches thousands of documents, and scoring each
    was most of a search without numpy. A document's score is at most its total times its coverage times
    :attr:`_Parts.most`. The units are set aside largest first: a document matching only set-aside units
    scores at most their summed :attr:`_Scored.high` times the coverage of that many units times ``most``;
    when that falls short of the ``limit``-th best score among the documents the other units match (less
    the rounding margin of :func:`ranking`), only those are scored. Otherwise the rest are summed
    too, and scored where their total and coverage can reach that ``limit``-th best.
    """
    parts = _parts(index, query)
    units = parts.units
    # Every unit score is positive (its terms' smallest values are), so every matching document's total is.
    if len(parts.members) <= limit or not all(u.weight * u.low * (1 - _BOUND_MARGIN) > 0.0 for u in units if u.docs):
        _accumulate(parts, parts.members)
        found = _scores(parts, parts.members)
        return found, len(found)
    order = sorted(range(len(units)), key=lambda i: (-len(units[i].docs), i))
    done: set[int] = set()
    found = {}
    for aside in range(len(units) - 1, 0, -1):
        kept = set(parts.exact).union(*(units[i].docs for i in order[aside:]))
        if len(kept) < limit:
            continue
        fresh = kept - done
        _accumulate(parts, fresh)
        found.update(_scores(parts, fresh))
        done |= fresh
        high = sum(units[i].weight * units[i].high for i in order[:aside])
        most = high * parts.coverage[aside] * parts.most * (1 + _BOUND_MARGIN)
        if most < max(found.values()) and most < heapq.nlargest(limit, found.values())[-1] - ROUNDING_MARGIN:
            return found, len(parts.members)
    rest = parts.members - done
    _accumulate(parts, rest)
    if len(found) >= limit:
        floor = (heapq.nlargest(limit, found.values())[-1] - ROUNDING_MARGIN) / (parts.most * (1 + _BOUND_MARGIN))
        totals, matched, coverage = parts.totals, parts.matched, parts.coverage
        rest = {doc for doc in rest if totals[doc] * coverage[matched[doc]] >= floor}
    found.update(_scores(parts, rest))
    return found, len(parts.members)


def _catalog_lists(index: SearchIndex) -> tuple[tuple[int, ...], tuple[frozenset[str], ...], tuple[float, ...]]:
    """Per document: the number of its distinct action class set, those sets, and its name-word count (at
    least 1; a document without name words is named by no query word)."""
    found: tuple[tuple[int, ...], tuple[frozenset[str], ...], tuple[float, ...]] | None
    found = index.derived.get("catalog-lists")
    if found is None:
        numbers: dict[frozenset[str], int] = {}
        kinds = tuple(numbers.setdefault(a, len(numbers)) for a in index.actions)
        lengths = tuple(float(max(1, len(w))) for w in index.name_words)
        found = index.derived["catalog-lists"] = (kinds, tuple(numbers), lengths)
    return found


def ranking(
    index: SearchIndex, query: str, *, limit: int | None = None, semantic: SemanticLayer | None = None
) -> Ranking:
    """The ranking computed document by document in plain Python: the definition every fast path must match.

    With a limit and lexical only, the documents that provably cannot reach the top ``limit`` are not
    scored (:func:`lexical_top`); the ranking is the same, ``total`` included.
    """
    total: int | None = None
    if semantic is None and limit is not None and limit > 0:
        lexical, total = lexical_top(index, query, limit)
    else:
        lexical = lexical_scores(index, query)
    identities = index.identities
    best_lexical = max(lexical.values(), default=0.0)
    similarities: tuple[float, ...] | None = None
    gloss = query_gloss(index, query, semantic)
    gloss_lexical: dict[int, float] = {}
    gloss_similarities: tuple[float, ...] | None = None
    if semantic is None:
        fused = lexical
    else:
        similarities = semantic.similarities(query)
        scale = 1.0 / best_lexical if best_lexical > 0 else 0.0
        fused = {
            doc: lexical.get(doc, 0.0) * scale + SEMANTIC_WEIGHT * similarity
            for doc, similarity in enumerate(similarities)
            if doc in lexical or similarity >= SEMANTIC_FLOOR
        }
        if gloss:
            gloss_lexical = lexical_scores(index, gloss)
            gloss_similarities = semantic.similarities(gloss)
            best_gloss = max(gloss_lexical.values(), default=0.0)
            gloss_scale = 1.0 / best_gloss if best_gloss > 0 else 0.0
            fused = {
                doc: (lexical.get(doc, 0.0) * scale + SEMANTIC_WEIGHT * similarity)
                + (
                    GLOSS_LEXICAL_WEIGHT * (gloss_lexical.get(doc, 0.0) * gloss_scale)
                    + GLOSS_SEMANTIC_WEIGHT * gloss_similarity
                )
                for doc, (similarity, gloss_similarity) in enumerate(zip(similarities, gloss_similarities, strict=True))
                if doc in fused or doc in gloss_lexical or gloss_similarity >= SEMANTIC_FLOOR
            }
        for doc, bonus in operation_bonus(index, analyse(query, index.keywords, index.exact)).items():
            if doc in fused:
                fused[doc] += bonus
    candidates: Iterable[tuple[int, float]] = fused.items()
    if limit is not None and len(fused) > limit:
        # Keys only for the candidates that can reach the top ``limit``: the k-th best raw score, less a
        # margin above the rounding to 9 decimals, bounds every rounded key that ties or beats it. The
        # result is the same as keying all of them (ADR 0078); at 10,000 capabilities it was most of a search.
        floor = heapq.nlargest(limit, fused.values())[-1] - ROUNDING_MARGIN
        candidates = [(doc, score) for doc, score in candidates if score >= floor]
    scored = [(-round(score, 9), identities[doc], doc) for doc, score in candidates]
    best = sorted(scored) if limit is None else heapq.nsmallest(limit, scored)
    matches = tuple(
        Match(
            identity=identity,
            score=-negative,
            lexical=round(lexical.get(doc, 0.0), 9),
            similarity=None if similarities is None else similarities[doc],
            gloss_lexical=None if gloss_similarities is None else round(gloss_lexical.get(doc, 0.0), 9),
            gloss_similarity=None if gloss_similarities is None else gloss_similarities[doc],
        )
        for negative, identity, doc in best
    )
    total = len(fused) if total is None else total
    return Ranking(
        matches=matches,
        confident=is_confident(matches, best_lexical),
        total=total,
        gloss=gloss if gloss_similarities is not None else "",
    )
