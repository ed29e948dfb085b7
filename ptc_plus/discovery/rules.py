"""What the two rankers share: the tuning, the result types and the small rules both apply.

:mod:`~ptc_plus.discovery.ranker` scores in plain Python (the definition) and
:mod:`~ptc_plus.discovery.kernel` computes the same scores over numpy arrays; both read their
weights, thresholds and margins from here and return the :class:`Ranking` defined here, so neither imports
the other's code (:mod:`~ptc_plus.discovery.ranker` re-exports the tuning and the result types: its names
are the ones the docs, benchmarks and tests use). The weights are explained in
:mod:`~ptc_plus.discovery.ranker` and ADR 0026, 0077 and 0084.
"""

from __future__ import annotations

from typing import Any

import attrs

from ptc_plus.discovery import gloss as glossing
from ptc_plus.discovery.index import SearchIndex
from ptc_plus.discovery.query import SYNONYM_WEIGHT, Unit
from ptc_plus.discovery.semantic import SemanticLayer

K1 = 1.2
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


ROUNDING_MARGIN = 1e-6
"""Far above the 0.5e-9 of rounding scores to 9 decimals (and float error at any score size seen)."""
SEMANTIC_WEIGHT = 1.0
"""Fused score = lexical score / the query's best lexical score + this × cosine similarity (ADR 0077;
chosen on the tuning part of ``tests/data/search_eval``)."""
SEMANTIC_FLOOR = 0.1
"""A capability no query term matches is a candidate only from this similarity up."""
GLOSS_LEXICAL_WEIGHT = 0.2
GLOSS_SEMANTIC_WEIGHT = 1.5
"""With the semantic layer, a query's English gloss (ADR 0084) adds this × its lexical score over its best
lexical score, plus this × its similarity, to every capability's fused score (chosen on the tuning part of
``tests/data/search_eval``)."""
OPERATION_WEIGHT = 0.25
"""With the semantic layer, a *sibling* (a capability the query's object matched) whose operation the
query's verb has an opinion on gets this × (its :func:`action_factor` − 1) added to its fused score (ADR
0099): there the lexical action factor is divided by the best lexical score and can be outweighed by
similarity, and the verb must still decide between an object's tools. Chosen on the tuning parts (the
smallest of 0.25, 0.5, 1, 1.5, 2 under which the operation decides between siblings on both catalogs)."""
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
    ``gloss_lexical`` and ``gloss_similarity`` are the same for the query's English gloss (ADR 0084), ``None``
    when there was none.
    """

    identity: str
    score: float
    lexical: float = 0.0
    similarity: float | None = None
    gloss_lexical: float | None = None
    gloss_similarity: float | None = None


@attrs.frozen(kw_only=True)
class Ranking:
    """Matches best first and whether the best of them is a good match (``confident``)."""

    matches: tuple[Match, ...]
    confident: bool
    total: int
    """How many capabilities matched at all (``matches`` may be cut to a limit)."""
    gloss: str = ""
    """The English gloss scored beside the query (ADR 0084); ``""`` when none was."""


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


def operation_bonus(index: SearchIndex, units: list[Unit]) -> dict[int, float]:
    """What the semantic fusion adds to the fused score of each *sibling* whose operation the query's verb
    has an opinion on (ADR 0099): :data:`OPERATION_WEIGHT` × (its :func:`action_factor` − 1), positive when
    it performs the operation the query names, negative when it performs a conflicting one.

    Siblings are the documents a unit other than the verb's matches by a concept term (the query's object
    chose them): a capability sharing only the verb (``list_files`` for "list my notes") is not lifted over
    the object's own tools. Empty when the query names no operation or names nothing else.
    """
    verb = next((u for u in units if u.actions), None)
    if verb is None or not OPERATION_WEIGHT:
        return {}
    siblings: set[int] = set()
    for unit in units:
        if unit is not verb:
            for term, weight in unit.terms.items():
                if weight >= CONCEPT_FLOOR or not unit.concept:
                    siblings.update(doc for doc, _ in index.postings.get(term, ()))
    factors: dict[frozenset[str], float] = {}
    found: dict[int, float] = {}
    for doc in sorted(siblings):
        offered = index.actions[doc]
        factor = factors.get(offered)
        if factor is None:
            factor = factors[offered] = action_factor(verb.actions, offered)
        if factor != 1.0:
            found[doc] = OPERATION_WEIGHT * (factor - 1.0)
    return found


def concept_terms(unit: Unit) -> list[str]:
    # Terms from U+3040 up are CJK n-grams: overlapping bigrams are never neighbours worth a pair.
    return sorted(t for t, w in unit.terms.items() if w >= CONCEPT_FLOOR and t[0] < "\u3040")


def derived_memo(index: SearchIndex, name: str) -> dict[Any, Any]:
    """The memo ``name`` of values derived from ``index`` (kept in ``SearchIndex.derived``; empty at first)."""
    found: dict[Any, Any] | None = index.derived.get(name)
    if found is None:
        found = index.derived.setdefault(name, {})
    return found


def query_gloss(index: SearchIndex, query: str, semantic: SemanticLayer | None) -> str:
    """The query's English gloss when the semantic layer is on (the configuration it was measured in) and
    ``PTC_PLUS_GLOSS`` does not turn it off."""
    return "" if semantic is None or not glossing.enabled() else glossing.english_gloss(query, index.keywords)


def is_confident(matches: tuple[Match, ...], best_lexical: float) -> bool:
    if not matches:
        return False
    top = matches[0]
    if top.similarity is None:
        return best_lexical >= CONFIDENT_LEXICAL_ONLY
    return min(1.0, best_lexical / CONFIDENT_LEXICAL) + top.similarity >= CONFIDENT_FUSED
