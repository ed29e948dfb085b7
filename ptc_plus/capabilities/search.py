"""Deterministic lexical ranking: query analysis and BM25F-style scoring with coverage.

A query is cut into *units*: each English word (with its synonyms), each
dictionary word found in a CJK run (with its expansions and its character
n-grams), and each CJK stretch the dictionary does not know (n-grams only).
A capability's score sums its unit scores and is scaled by the share of units
it matches, so "delete branch" prefers a tool matching both words. Equal
scores are ordered by identity. No model is involved.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from ptc_plus.capabilities.index import SearchIndex
from ptc_plus.capabilities.keywords import CompiledKeywords
from ptc_plus.capabilities.terms import UNIGRAM_PREFIX, cjk_runs, cjk_terms, latin_words

K1 = 1.2
WORD_WEIGHT = 1.0
SYNONYM_WEIGHT = 0.5
DICTIONARY_WEIGHT = 0.9
INNER_DICTIONARY_WEIGHT = 0.6
BIGRAM_WEIGHT = 0.6
UNIGRAM_WEIGHT = 0.15
COVERAGE_FLOOR = 0.3
EXACT_NAME_BONUS = 1000.0


@attrs.frozen(kw_only=True)
class Match:
    """One ranked capability: its identity and score (higher is better)."""

    identity: str
    score: float


Unit = Mapping[str, float]


def _put(unit: dict[str, float], term: str, weight: float) -> None:
    if weight > unit.get(term, 0.0):
        unit[term] = weight


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
        for term in sorted(keywords.cjk[word]):
            _put(unit, term, DICTIONARY_WEIGHT)
        for inner in keywords.cjk_matches(word):
            for term in sorted(keywords.cjk[inner]):
                _put(unit, term, INNER_DICTIONARY_WEIGHT)
        for term in cjk_terms(word):
            _put(unit, term, UNIGRAM_WEIGHT if term.startswith(UNIGRAM_PREFIX) else BIGRAM_WEIGHT)
        units.append(unit)
        i += size
    if leftover:
        units.append(_ngram_unit(leftover))
    return [u for u in units if u]


def _ngram_unit(text: str) -> Unit:
    unit: dict[str, float] = {}
    for term in cjk_terms(text):
        _put(unit, term, UNIGRAM_WEIGHT if term.startswith(UNIGRAM_PREFIX) else BIGRAM_WEIGHT)
    return unit


def analyse(query: str, keywords: CompiledKeywords) -> list[Unit]:
    """The query's units, each a map of search term → query weight."""
    units: list[Unit] = []
    for word in dict.fromkeys(latin_words(query)):
        unit: dict[str, float] = {word: WORD_WEIGHT}
        for term in sorted(keywords.latin.get(word, ())):
            _put(unit, term, SYNONYM_WEIGHT)
        units.append(unit)
    for run in cjk_runs(query):
        units.extend(_cjk_units(run, keywords))
    return units


def _unit_scores(index: SearchIndex, unit: Unit) -> dict[int, float]:
    scores: dict[int, float] = {}
    for term in sorted(unit):
        postings = index.postings.get(term)
        if not postings:
            continue
        factor = unit[term] * index.idf[term]
        for doc, weight in postings:
            scores[doc] = scores.get(doc, 0.0) + factor * weight * (K1 + 1) / (weight + K1)
    return scores


def rank(index: SearchIndex, query: str, *, limit: int | None = None) -> list[Match]:
    """Capabilities matching ``query``, best first (ties by identity); at most ``limit``."""
    units = analyse(query, index.keywords)
    totals: dict[int, float] = {}
    matched: dict[int, int] = {}
    for unit in units:
        for doc, score in sorted(_unit_scores(index, unit).items()):
            totals[doc] = totals.get(doc, 0.0) + score
            matched[doc] = matched.get(doc, 0) + 1
    wanted = query.strip().lower()
    for doc in index.exact.get(wanted, ()):
        totals[doc] = totals.get(doc, 0.0) + EXACT_NAME_BONUS
        matched[doc] = max(matched.get(doc, 0), len(units))
    count = max(1, len(units))
    results = [
        Match(
            identity=index.identities[doc],
            score=round(total * (COVERAGE_FLOOR + (1 - COVERAGE_FLOOR) * min(1.0, matched[doc] / count)), 9),
        )
        for doc, total in totals.items()
        if total > 0
    ]
    results.sort(key=lambda m: (-m.score, m.identity))
    return results if limit is None else results[:limit]
