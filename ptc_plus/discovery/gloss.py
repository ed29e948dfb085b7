"""English glosses of a Chinese query's unknown words, from CC-CEDICT (ADR 0084).

Tool texts are mostly English; the hand-written keyword index (:mod:`keywords`) translates the Chinese
words its authors foresaw, and a Chinese query in other words reached the tools only through the semantic
layer. :func:`english_gloss` segments each CJK run of a query by forward maximum matching over the
dictionary's headwords and returns, as one English text, the senses of every word the keyword index does
not already cover. The ranker scores that text lexically and semantically beside the query itself
(``search.GLOSS_LEXICAL_WEIGHT``, ``search.GLOSS_SEMANTIC_WEIGHT``), only while the semantic layer is on:
the configuration measured and chosen on the tuning queries. ``PTC_PLUS_GLOSS=off`` turns it off
(:func:`enabled`).

The table (``vocab/cedict_gloss.json.gz``, CC BY-SA 4.0, built by ``scripts/build_cedict_gloss.py``) is
read on the first query that needs it and kept for the process (~1.2 MB on disk, ~30 MB in memory).
"""

from __future__ import annotations

import gzip
import os
from collections.abc import Mapping
from functools import cache
from pathlib import Path

import attrs

from hookspecs.serialization import structure
from ptc_plus.discovery.keywords import CompiledKeywords
from ptc_plus.discovery.terms import cjk_runs

TABLE_PATH = Path(__file__).with_name("vocab") / "cedict_gloss.json.gz"
FORMAT_VERSION = 1
SWITCH_ENV = "PTC_PLUS_GLOSS"
_OFF = frozenset({"0", "off", "no", "false"})
MAX_WORD = 8
"""Longest headword tried by the segmentation (longer headwords are idioms a query rarely contains)."""


@attrs.frozen(kw_only=True)
class GlossTable:
    """Simplified headword → its English senses (content words, first senses first)."""

    version: int
    source: str
    licence: str
    senses: int
    entries: Mapping[str, tuple[str, ...]]


def enabled(env: Mapping[str, str] | None = None) -> bool:
    """Whether glossing is wanted: ``PTC_PLUS_GLOSS`` is not set to off (``0``, ``off``, ``no``, ``false``)."""
    return (os.environ if env is None else env).get(SWITCH_ENV, "").strip().lower() not in _OFF


def segment(run: str, entries: Mapping[str, object]) -> list[str]:
    """``run`` split into headwords by forward maximum matching; a character no headword starts stands alone."""
    words: list[str] = []
    start = 0
    while start < len(run):
        size = min(MAX_WORD, len(run) - start)
        while size > 1 and run[start : start + size] not in entries:
            size -= 1
        words.append(run[start : start + size])
        start += size
    return words


def english_gloss(query: str, keywords: CompiledKeywords) -> str:
    """The English senses of ``query``'s Chinese words that ``keywords`` does not cover, space-separated
    in query order without repeats; ``""`` for a query with nothing to gloss (every English query).

    A word is covered when it, or any word inside it, is a key of the keyword index: those words already
    expand to the English their authors chose.
    """
    runs = cjk_runs(query)
    if not runs:
        return ""
    entries = table().entries
    found: list[str] = []
    for run in runs:
        for word in segment(run, entries):
            if word in keywords.cjk or keywords.cjk_matches(word):
                continue
            for sense in entries.get(word, ()):
                for english in sense.split():
                    if english not in found:
                        found.append(english)
    return " ".join(found)


@cache
def table() -> GlossTable:
    """The shipped gloss table, read once per process."""
    import orjson

    data = orjson.loads(gzip.decompress(TABLE_PATH.read_bytes()))
    entries = data.pop("entries")
    # cattrs checks the header; the 94,000 entries are plain lists of strings, converted without it.
    header = structure({**data, "entries": {}}, GlossTable)
    if header.version != FORMAT_VERSION:
        raise ValueError(f"{TABLE_PATH.name}: format version {header.version}, expected {FORMAT_VERSION}")
    return attrs.evolve(header, entries={word: tuple(senses) for word, senses in entries.items()})
