"""Query analysis: a query cut into the *units* the ranker scores (:mod:`~ptc_plus.discovery.ranker`).

A query is cut into *units*: each English word (with its synonyms), each
dictionary word found in a CJK run (with its expansions, the first weighing
most, and its character n-grams), and each CJK stretch the dictionary does not
know (n-grams only). English words come cleaned (:func:`~ptc_plus.discovery.terms.query_words`):
no contraction clitics or bare numbers, letters glued to digits (``ec2``) one unit
matching only whole, code identifiers of the user's own (``parse_config``) left
out, and several words the keyword index knows as a phrase (``spin up``) one
unit. A word or dictionary unit is one *concept*; the actions a unit names are
those the keyword index gives its words. The weights below are each term's query
weight within its unit.
"""

from __future__ import annotations

from collections.abc import Container, Iterable, Mapping

import attrs

from ptc_plus.discovery.keywords import CompiledKeywords
from ptc_plus.discovery.terms import UNIGRAM_PREFIX, QueryWord, cjk_runs, cjk_terms, query_words

WORD_WEIGHT = 1.0
SYNONYM_WEIGHT = 0.5
DICTIONARY_WEIGHT = 0.9
INNER_DICTIONARY_WEIGHT = 0.6
EXPANSION_DECAY = 0.9
"""Each later expansion of a dictionary word weighs this much less than the one before (authors list
the closest translation first)."""
BIGRAM_WEIGHT = 0.6
UNIGRAM_WEIGHT = 0.15


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
