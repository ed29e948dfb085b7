"""Deterministic lexical ranking: query analysis and BM25F-style scoring with coverage.

A query is cut into *units*: each English word (with its synonyms), each
dictionary word found in a CJK run (with its expansions, the first weighing
most, and its character n-grams), and each CJK stretch the dictionary does not
know (n-grams only). English words come cleaned (:func:`~ptc_plus.capabilities.terms.query_words`):
no contraction clitics or bare numbers, letters glued to digits (``ec2``) one unit
matching only whole, code identifiers of the user's own (``parse_config``) left
out, and several words the keyword index knows as a phrase (``spin up``) one
unit. A word or dictionary unit is one *concept*: a capability
scores for it by its best-matching alternative (one term, or the summed words
of a several-word expansion such as "pivot table"), and the terms share the
rarity of the commonest of them, so a rare synonym does not outweigh the
plain word. An n-gram unit sums its n-grams. A capability's score sums its unit scores (the
units naming an action at half weight) and is scaled by

- *coverage*: the share of units it matches ("delete branch" prefers both words);
- *action agreement*: the query's action (the action classes of its first
  unit that names any) against the capability's (those of its first name
  word): the same class is rewarded, the same family a little, an exclusive
  family that differs (``read.list`` against ``produce.create``) is penalised;
- *name share*: the share of the capability's own name words the query names;
- *pairs*: neighbouring query concepts that stand next to each other in its
  name or description.

Equal scores are ordered by identity. Where numpy is installed the same scores, bit for bit, are computed
over arrays (the end of this module); the loops are the definition. No model call is involved (ADR 0023,
0026); with the optional semantic layer (:mod:`~ptc_plus.capabilities.semantic`, ADR 0077) :func:`ranking`
fuses these scores with a multilingual sentence similarity computed locally and says whether the best hit is
a good match.
"""

from __future__ import annotations

import heapq
import importlib.util
from collections.abc import Callable, Container, Iterable, Mapping
from functools import cache
from typing import Any

import attrs

from ptc_plus.capabilities.index import SearchIndex
from ptc_plus.capabilities.keywords import CompiledKeywords
from ptc_plus.capabilities.semantic import SemanticLayer
from ptc_plus.capabilities.terms import UNIGRAM_PREFIX, QueryWord, cjk_runs, cjk_terms, query_words

K1 = 1.2
WORD_WEIGHT = 1.0
SYNONYM_WEIGHT = 0.5
DICTIONARY_WEIGHT = 0.9
INNER_DICTIONARY_WEIGHT = 0.6
EXPANSION_DECAY = 0.9
"""Each later expansion of a dictionary word weighs this much less than the one before (authors list
the closest translation first)."""
BIGRAM_WEIGHT = 0.6
UNIGRAM_WEIGHT = 0.15
CONCEPT_FLOOR = SYNONYM_WEIGHT
"""Terms weighted at least this much stand for a unit's concept (n-grams and inner words do not)."""
COVERAGE_FLOOR = 0.3
EXACT_NAME_BONUS = 1000.0
ACTION_UNIT_WEIGHT = 0.5
"""Every unit naming an action counts half of its own term score: agreement is judged by
:data:`ACTION_AGREES` and friends from the first of them, the object a query names should choose the
service, and a later verb ("edit the product and drop its price") must not pick its namesake sibling."""
ACTION_AGREES = 1.3
ACTION_RELATED = 1.1
ACTION_CONFLICTS = 0.75
NAME_SHARE_WEIGHT = 0.3
PAIR_WEIGHT = 0.3


_ROUNDING_MARGIN = 1e-6
"""Far above the 0.5e-9 of rounding scores to 9 decimals (and float error at any score size seen)."""
SEMANTIC_WEIGHT = 1.0
"""Fused score = lexical score / the query's best lexical score + this × cosine similarity (ADR 0077;
chosen on the tuning part of ``tests/data/search_eval``)."""
SEMANTIC_FLOOR = 0.1
"""A capability no query term matches is a candidate only from this similarity up."""
CONFIDENT_LEXICAL = 20.0
CONFIDENT_FUSED = 0.34
"""With the semantic layer, the top hit is a good match when min(1, best lexical / CONFIDENT_LEXICAL) plus
its similarity reaches this (calibrated on the tuning part's "nothing fits" queries, ADR 0077)."""
CONFIDENT_LEXICAL_ONLY = 3.25
"""Without the semantic layer, the best lexical score a good match reaches (same calibration)."""


@attrs.frozen(kw_only=True)
class Match:
    """One ranked capability: its identity and score (higher is better).

    ``lexical`` is its lexical score and ``similarity`` its semantic similarity (``None`` without the
    semantic layer); ``score`` is the fused score the ranking used (the lexical score when lexical only).
    """

    identity: str
    score: float
    lexical: float = 0.0
    similarity: float | None = None


@attrs.frozen(kw_only=True)
class Ranking:
    """Matches best first and whether the best of them is a good match (``confident``)."""

    matches: tuple[Match, ...]
    confident: bool
    total: int
    """How many capabilities matched at all (``matches`` may be cut to a limit)."""


@attrs.frozen(kw_only=True)
class Unit:
    """One query unit: search term → query weight, whether it is one concept, and the actions it names."""

    terms: Mapping[str, float]
    concept: bool
    actions: frozenset[str] = frozenset()
    phrases: tuple[tuple[str, ...], ...] = ()
    """Expansions of several words ("pivot table"): their terms add up instead of standing in for each other."""
    whole: bool = False
    """Letters glued to digits (``ec2``): only a capability holding every term matches."""


def _put(unit: dict[str, float], term: str, weight: float) -> None:
    if weight > unit.get(term, 0.0):
        unit[term] = weight


def _actions_of(words: Iterable[str], keywords: CompiledKeywords) -> frozenset[str]:
    return frozenset(a for word in words for a in keywords.actions.get(word, ()))


def _cjk_units(run: str, keywords: CompiledKeywords) -> list[Unit]:
    units: list[Unit] = []
    leftover = ""
    i = 0
    while i < len(run):
        size = next((s for s in range(min(keywords.max_cjk, len(run) - i), 0, -1) if run[i : i + s] in keywords.cjk), 0)
        if not size:
            leftover += run[i]
            i += 1
            continue
        if leftover:
            units.append(_ngram_unit(leftover))
            leftover = ""
        word = run[i : i + size]
        unit: dict[str, float] = {}
        for term, position in sorted(keywords.cjk[word].items()):
            _put(unit, term, DICTIONARY_WEIGHT * EXPANSION_DECAY**position)
        phrases: dict[tuple[str, ...], None] = {}
        for inner in keywords.cjk_matches(word):
            for term, position in sorted(keywords.cjk[inner].items()):
                _put(unit, term, INNER_DICTIONARY_WEIGHT * EXPANSION_DECAY**position)
            phrases.update(dict.fromkeys(_phrases(keywords.cjk[inner])))
        for term in cjk_terms(word):
            _put(unit, term, UNIGRAM_WEIGHT if term.startswith(UNIGRAM_PREFIX) else BIGRAM_WEIGHT)
        units.append(
            Unit(terms=unit, concept=True, actions=_actions_of(keywords.cjk[word], keywords), phrases=tuple(phrases))
        )
        i += size
    if leftover:
        units.append(_ngram_unit(leftover))
    return [u for u in units if u.terms]


def _phrases(expansions: Mapping[str, int]) -> list[tuple[str, ...]]:
    by_position: dict[int, list[str]] = {}
    for term, position in sorted(expansions.items()):
        by_position.setdefault(position, []).append(term)
    return [tuple(terms) for _, terms in sorted(by_position.items()) if len(terms) > 1]


def _ngram_unit(text: str) -> Unit:
    unit: dict[str, float] = {}
    for term in cjk_terms(text):
        _put(unit, term, UNIGRAM_WEIGHT if term.startswith(UNIGRAM_PREFIX) else BIGRAM_WEIGHT)
    return Unit(terms=unit, concept=False)


def analyse(query: str, keywords: CompiledKeywords, names: Container[str] = frozenset()) -> list[Unit]:
    """The query's units in query order (English words first, then CJK runs).

    A code identifier (``parse_config``) or a bare number in the query is the user's own data, not
    a description of a tool: its words count only when it is a catalog name in ``names`` or when
    the query holds nothing else (``12306``). Several words the keyword index knows as one phrase
    (``spin up``, ``jot down``) are one unit of that phrase's expansions.
    """
    runs = cjk_runs(query)
    found = query_words(query)
    words = [w for w in found if not w.identifier or w.identifier in names]
    if not words and not runs:
        words = found
    units: list[Unit] = []
    seen: set[tuple[str, ...]] = set()
    i = 0
    while i < len(words):
        phrase = _phrase_at(words, i, keywords)
        key = (phrase,) if phrase else words[i].pieces
        i += phrase.count(" ") + 1 if phrase else 1
        if key in seen:
            continue
        seen.add(key)
        if phrase:
            units.append(_expansion_unit(keywords.phrases[phrase], keywords))
        elif len(key) > 1:
            units.append(Unit(terms=dict.fromkeys(key, WORD_WEIGHT), concept=False, whole=True))
        else:
            word = key[0]
            unit: dict[str, float] = {word: WORD_WEIGHT}
            for term in sorted(keywords.latin.get(word, ())):
                _put(unit, term, SYNONYM_WEIGHT)
            units.append(Unit(terms=unit, concept=True, actions=_actions_of([word], keywords)))
    for run in runs:
        units.extend(_cjk_units(run, keywords))
    return units


def _phrase_at(words: list[QueryWord], start: int, keywords: CompiledKeywords) -> str:
    """The longest known phrase of several words from ``start`` (its key in ``keywords.phrases``), or ``""``."""
    for size in range(min(keywords.max_phrase, len(words) - start), 1, -1):
        span = words[start : start + size]
        if all(len(w.pieces) == 1 for w in span):
            phrase = " ".join(w.pieces[0] for w in span)
            if phrase in keywords.phrases:
                return phrase
    return ""


def _expansion_unit(expansions: Mapping[str, int], keywords: CompiledKeywords) -> Unit:
    unit: dict[str, float] = {}
    for term, position in sorted(expansions.items()):
        _put(unit, term, DICTIONARY_WEIGHT * EXPANSION_DECAY**position)
    return Unit(
        terms=unit, concept=True, actions=_actions_of(expansions, keywords), phrases=tuple(_phrases(expansions))
    )


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
    kept, as the arrays below are)."""
    memo = _derived(index, "posting-columns")
    found: tuple[tuple[int, ...], float, float] | None = memo.get(term)
    if found is None:
        entries = index.postings[term]
        weights = [w for _, w in entries]
        found = memo[term] = (tuple(doc for doc, _ in entries), min(weights), max(weights))
    return found


def action_factor(wanted: frozenset[str], offered: frozenset[str]) -> float:
    """How a capability offering ``offered`` actions suits a query wanting ``wanted`` (1.0: no opinion).

    Classes are ``family.class``; a class without a family (``run``) only ever agrees.
    """
    if not wanted or not offered:
        return 1.0
    if wanted & offered:
        return ACTION_AGREES
    ours = {a.split(".")[0] for a in wanted if "." in a}
    theirs = {a.split(".")[0] for a in offered if "." in a}
    if ours & theirs:
        return ACTION_RELATED
    return ACTION_CONFLICTS if ours and theirs else 1.0


def _concept_terms(unit: Unit) -> list[str]:
    # Terms from U+3040 up are CJK n-grams: overlapping bigrams are never neighbours worth a pair.
    return sorted(t for t, w in unit.terms.items() if w >= CONCEPT_FLOOR and t[0] < "\u3040")


def _pair_scores(index: SearchIndex, units: list[Unit], scores: list[float]) -> float:
    """Adds to ``scores`` (one per document), over neighbouring concept units, the weight of their best pair
    a document holds; returns a bound no document's sum exceeds (the sum of each neighbourhood's best)."""
    concepts = [_concept_terms(u) for u in units if u.concept]
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
    memo = _derived(index, "pair-docs")
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
    return _Parts(
        units=scored,
        exact=exact,
        members=members,
        totals=[0.0] * size,
        matched=[0] * size,
        coverage=coverage,
        agreement=agreement,
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
    share, pair_scale = NAME_SHARE_WEIGHT, parts.pair_scale
    # The factors in the order the module docstring lists them, multiplied left to right in one pass. A
    # document no verb, name word or pair concerns is multiplied by exactly 1.0 there (1 + 0.0), which
    # leaves its score unchanged: the scores are those of applying each factor only where it bites.
    return {
        doc: totals[doc]
        * coverage[matched[doc]]
        * agreement[kinds[doc]]
        * (1.0 + share * named[doc] / lengths[doc])
        * (1.0 + pair_scale * pairs[doc])
        for doc in docs
        if totals[doc] > 0.0
    }


def _lexical(index: SearchIndex, query: str) -> dict[int, float]:
    """Each matching document's lexical score (unrounded)."""
    parts = _parts(index, query)
    _accumulate(parts, parts.members)
    return _scores(parts, parts.members)


_BOUND_MARGIN = 1e-9
"""Relative slack on the score bounds of :func:`_lexical_top`, far above the float error of a few operations."""


def _lexical_top(index: SearchIndex, query: str, limit: int) -> tuple[dict[int, float], int]:
    """The lexical scores of at least every document that can rank in the top ``limit`` (ties and the
    rounding to 9 decimals included), and how many documents match: :func:`_lexical` without scoring the
    documents that provably cannot rank.

    At 10,000 capabilities a common word ("查看", "create") matches thousands of documents, and scoring each
    was most of a search without numpy. A document's score is at most its total times its coverage times
    :attr:`_Parts.most`. The units are set aside largest first: a document matching only set-aside units
    scores at most their summed :attr:`_Scored.high` times the coverage of that many units times ``most``;
    when that falls short of the ``limit``-th best score among the documents the other units match (less
    the rounding margin of :func:`reference_ranking`), only those are scored. Otherwise the rest are summed
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
        if most < max(found.values()) and most < heapq.nlargest(limit, found.values())[-1] - _ROUNDING_MARGIN:
            return found, len(parts.members)
    rest = parts.members - done
    _accumulate(parts, rest)
    if len(found) >= limit:
        floor = (heapq.nlargest(limit, found.values())[-1] - _ROUNDING_MARGIN) / (parts.most * (1 + _BOUND_MARGIN))
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
    """Capabilities matching ``query``, best first (ties by identity), at most ``limit``, and a verdict.

    Lexical only without ``semantic``; with it, each score is fused with the capability's similarity
    (:data:`SEMANTIC_WEIGHT`) and capabilities no term matches join from :data:`SEMANTIC_FLOOR` up.
    Computed over numpy arrays (:func:`_ranking_arrays`) for catalogs above :data:`ARRAYS_ABOVE` where
    numpy is installed, else by :func:`reference_ranking`: the result is the same.
    """
    vectorised = _vectorised() if len(index.identities) > ARRAYS_ABOVE else None
    if vectorised is None:
        return reference_ranking(index, query, limit=limit, semantic=semantic)
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
    return _ranking_arrays if importlib.util.find_spec("numpy") is not None else None


def reference_ranking(
    index: SearchIndex, query: str, *, limit: int | None = None, semantic: SemanticLayer | None = None
) -> Ranking:
    """:func:`ranking` computed document by document in plain Python: the definition the arrays must match.

    With a limit and lexical only, the documents that provably cannot reach the top ``limit`` are not
    scored (:func:`_lexical_top`); the ranking is the same, ``total`` included.
    """
    total: int | None = None
    if semantic is None and limit is not None and limit > 0:
        lexical, total = _lexical_top(index, query, limit)
    else:
        lexical = _lexical(index, query)
    identities = index.identities
    best_lexical = max(lexical.values(), default=0.0)
    similarities: tuple[float, ...] | None = None
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
    candidates: Iterable[tuple[int, float]] = fused.items()
    if limit is not None and len(fused) > limit:
        # Keys only for the candidates that can reach the top ``limit``: the k-th best raw score, less a
        # margin above the rounding to 9 decimals, bounds every rounded key that ties or beats it. The
        # result is the same as keying all of them (ADR 0078); at 10,000 capabilities it was most of a search.
        floor = heapq.nlargest(limit, fused.values())[-1] - _ROUNDING_MARGIN
        candidates = [(doc, score) for doc, score in candidates if score >= floor]
    scored = [(-round(score, 9), identities[doc], doc) for doc, score in candidates]
    best = sorted(scored) if limit is None else heapq.nsmallest(limit, scored)
    matches = tuple(
        Match(
            identity=identity,
            score=-negative,
            lexical=round(lexical.get(doc, 0.0), 9),
            similarity=None if similarities is None else similarities[doc],
        )
        for negative, identity, doc in best
    )
    total = len(fused) if total is None else total
    return Ranking(matches=matches, confident=_confident(matches, best_lexical), total=total)


def _confident(matches: tuple[Match, ...], best_lexical: float) -> bool:
    if not matches:
        return False
    top = matches[0]
    if top.similarity is None:
        return best_lexical >= CONFIDENT_LEXICAL_ONLY
    return min(1.0, best_lexical / CONFIDENT_LEXICAL) + top.similarity >= CONFIDENT_FUSED


def rank(
    index: SearchIndex, query: str, *, limit: int | None = None, semantic: SemanticLayer | None = None
) -> list[Match]:
    """Capabilities matching ``query``, best first (ties by identity); at most ``limit`` (see :func:`ranking`)."""
    return list(ranking(index, query, limit=limit, semantic=semantic).matches)


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


# The same ranking over numpy arrays. At 10,000 capabilities a common query word matches thousands of
# documents, and the per-document Python work of the loops above was most of a search. Below each step is
# one array operation over the whole catalog, in the same order of float operations per document as the
# loops (IEEE addition, multiplication and division are exact to the last bit elementwise, and multiplying
# by exactly 1.0 or adding 0.0 leaves a value unchanged), so every score is bit for bit the loops' and
# rankings are byte-identical (tests/ptc_plus/capabilities/test_search_arrays.py compares the two over
# every labelled query). The loops stay the definition and the path used without numpy, which only the
# optional semantic extra installs. Arrays derived from the index are built on first use and kept in
# ``SearchIndex.derived``; they hold no tuning constant (those are read from this module on every call).

Array = Any
"""A numpy array (numpy's own types are not worth mypy's time here)."""


def _derived(index: SearchIndex, name: str) -> dict[Any, Any]:
    found: dict[Any, Any] | None = index.derived.get(name)
    if found is None:
        found = index.derived.setdefault(name, {})
    return found


def _posting_arrays(index: SearchIndex, term: str) -> tuple[Array, Array]:
    """Documents and weights of a term's postings."""
    import numpy as np

    memo = _derived(index, "postings")
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
    memo = _derived(index, "pairs")
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
    memo = _derived(index, "named-by")
    found = memo.get(term)
    if found is None:
        found = memo[term] = np.asarray(entries, dtype=np.intp)
    return found


def _catalog_arrays(index: SearchIndex) -> tuple[Array, tuple[frozenset[str], ...], Array]:
    """Per document: the number of its distinct action class set, those sets, and its name-word count."""
    import numpy as np

    memo = _derived(index, "catalog")
    found = memo.get("catalog")
    if found is None:
        numbers: dict[frozenset[str], int] = {}
        ids = np.fromiter((numbers.setdefault(a, len(numbers)) for a in index.actions), dtype=np.intp)
        lengths = np.fromiter((len(w) for w in index.name_words), dtype=np.float64, count=len(index.name_words))
        found = memo["catalog"] = (ids, tuple(numbers), np.maximum(lengths, 1.0))
    return found


def _unit_score_array(index: SearchIndex, unit: Unit, size: int) -> tuple[Array, Array]:
    """:func:`_unit_scores` as (score per document, whether it is a key)."""
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
    """:func:`_pair_scores` as an array (0 where a document holds no pair)."""
    import numpy as np

    concepts = [_concept_terms(u) for u in units if u.concept]
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


def _lexical_arrays(index: SearchIndex, query: str) -> tuple[Array, Array]:
    """:func:`_lexical` as (score per document, whether it matched).

    Scores of documents that did not match are 0.
    """
    import numpy as np

    size = len(index.identities)
    units = analyse(query, index.keywords, index.exact)
    verb = next((u for u in units if u.actions), None)
    totals = np.zeros(size)
    matched = np.zeros(size, dtype=np.intp)
    member = np.zeros(size, dtype=bool)
    for unit in units:
        weight = ACTION_UNIT_WEIGHT if unit.actions else 1.0
        scores, hit = _unit_score_array(index, unit, size)
        totals += weight * scores
        matched += hit
        member |= hit
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
        score *= np.array([action_factor(verb.actions, o) for o in offered])[ids]
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


def _ranking_arrays(index: SearchIndex, query: str, *, limit: int | None, semantic: SemanticLayer | None) -> Ranking:
    """:func:`reference_ranking` over arrays: the same :class:`Ranking`, bit for bit.

    Only the candidates that can reach the top ``limit`` (the same bound the loops use) become Python
    values, and they are rounded by Python's ``round`` as the loops round them.
    """
    import numpy as np

    score, member = _lexical_arrays(index, query)
    best_lexical = float(score[member].max()) if member.any() else 0.0
    similarities: Array | None = None
    if semantic is None:
        fused, keep = score, member
    else:
        similarities = semantic.similarity_array(query)
        scale = 1.0 / best_lexical if best_lexical > 0 else 0.0
        fused = score * scale + SEMANTIC_WEIGHT * similarities
        keep = member | (similarities >= SEMANTIC_FLOOR)
    docs = np.flatnonzero(keep)
    values = fused[docs]
    total = len(docs)
    if limit is not None and total > limit:
        floor = float(np.partition(values, total - limit)[total - limit]) - _ROUNDING_MARGIN
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
        )
        for negative, identity, doc in best
    )
    return Ranking(matches=matches, confident=_confident(matches, best_lexical), total=total)
