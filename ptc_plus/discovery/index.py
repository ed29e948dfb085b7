"""The inverted index over a catalog: weighted fields, per-term postings, pairs and actions.

Each capability is a document with fields: its name (and identity words),
source, parameter names, description and keywords from the keyword index.
A posting stores the field-weighted, length-normalised term frequency
(BM25F style), so ranking is a sum over query terms. Beside the postings the
index keeps, per document, its *name words* (name terms that are not also
source words: ``git_add`` in ``mcp:git`` is named by ``add``) and its *action*
(the action classes of its first name word that names one, else of its description's first word; ADR
0026, 0099), and it indexes
adjacent term *pairs* of names and descriptions, unordered, so a query's
neighbouring words can be rewarded for appearing together.
"""

from __future__ import annotations

import gc
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from itertools import pairwise
from typing import Any, cast

import attrs
import orjson

from hookspecs.serialization import canonical_bytes
from ptc_plus.capabilities import Capability, DiskCache, cache_key
from ptc_plus.discovery.keywords import CompiledKeywords
from ptc_plus.discovery.terms import UNIGRAM_PREFIX, terms
from ptc_plus.sdk import words

FIELD_WEIGHTS: Mapping[str, float] = {
    "name": 3.0,
    "keywords": 2.0,
    "parameters": 1.2,
    "source": 1.0,
    "description": 1.0,
}
PAIR_FIELD_WEIGHTS: Mapping[str, float] = {"name": 1.0, "description": 0.5}
LENGTH_NORMALISATION = 0.6
_PAUSE_COLLECTOR_ABOVE = 500
"""Capabilities above which :func:`build_index` pauses the cyclic collector (small builds are not worth it)."""
CACHE_ABOVE = 500
"""Capabilities above which :func:`cached_index` consults the disk cache (smaller builds take milliseconds)."""
CACHE_KIND = "search-index"
INDEX_FORMAT = 1
"""Version of the persisted :class:`SearchIndex` payload (:func:`encode_index`)."""


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
    pairs: Mapping[str, Mapping[str, tuple[tuple[int, float], ...]]] = attrs.field(factory=dict)
    """Term → a neighbouring term (either order) → documents and the weight of the field holding the two."""
    name_words: tuple[frozenset[str], ...] = ()
    named_by: Mapping[str, tuple[int, ...]] = attrs.field(factory=dict)
    """Name word → the documents whose :attr:`name_words` hold it."""
    actions: tuple[frozenset[str], ...] = ()
    derived: dict[str, Any] = attrs.field(factory=dict, init=False, eq=False, repr=False)
    """Forms of the fields above derived on first use by the ranker (numpy arrays of postings):
    a memo, never persisted, that changes nothing but the time."""


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


def name_words(fields: Mapping[str, list[str]]) -> list[str]:
    """The name's own words: name terms minus source words (all name terms if nothing is left)."""
    name = [t for t in fields["name"] if not t.startswith(UNIGRAM_PREFIX)]
    own = [t for t in name if t not in fields["source"]]
    return own or name


def _pairs(fields: Mapping[str, list[str]]) -> dict[tuple[str, str], float]:
    """Neighbouring terms of the name and the description, in both orders, with the best field weight."""
    found: dict[tuple[str, str], float] = {}
    for field, weight in PAIR_FIELD_WEIGHTS.items():
        sequence = [t for t in fields[field] if not t.startswith(UNIGRAM_PREFIX)]
        for first, second in pairwise(sequence):
            for key in ((first, second), (second, first)):
                # Not max(): the builtin's call cost dominated index builds at 10,000 capabilities.
                known = found.get(key, 0.0)
                found[key] = weight if weight > known else known
    return found


def _action(words_of_name: list[str], description: list[str], keywords: CompiledKeywords) -> frozenset[str]:
    """The operation a capability performs: the action classes of its first own name word, else of its
    description's first word (``notes_add``: "Add a note ..."), else of its first later name word that names
    one (``notes_add`` again, for a description that opens with no verb); none if nothing does.

    The description comes before later name words because a later name word is often the object
    (``write_query`` runs a query, it does not search).
    """
    for word in (*words_of_name[:1], *description[:1], *words_of_name[1:]):
        found = keywords.actions.get(word)
        if found:
            return found
    return frozenset()


class _MemoTerms:
    """:func:`terms` and name terms of strings seen before in one build, looked up instead of recomputed.

    Catalogs repeat sources and parameter names across many capabilities; :func:`terms` is pure, so a
    per-build memo changes nothing but the time (the lists are copied out, so callers may not alias them).
    """

    def __init__(self) -> None:
        self._prose: dict[str, tuple[str, ...]] = {}
        self._names: dict[str, tuple[str, ...]] = {}

    def prose(self, text: str) -> list[str]:
        found = self._prose.get(text)
        if found is None:
            found = self._prose[text] = tuple(terms(text))
        return list(found)

    def name(self, text: str) -> tuple[str, ...]:
        found = self._names.get(text)
        if found is None:
            found = self._names[text] = tuple(_name_terms(text))
        return found

    def fields(self, capability: Capability, keywords: CompiledKeywords) -> dict[str, list[str]]:
        """The same as :func:`document_fields`."""
        return {
            "name": list(self.name(capability.name)),
            "source": list(self.name(capability.source)),
            "parameters": [t for p in capability.parameters for t in self.name(p)],
            "description": self.prose(capability.description),
            "keywords": list(keywords.capability_terms.get(capability.identity, ())),
        }


def build_index(capabilities: Sequence[Capability], keywords: CompiledKeywords) -> SearchIndex:
    """Index ``capabilities`` (their order is kept: it is the final tie-break after identity)."""
    # No cyclic garbage collection during the build (as runtime/protocol.py does for large frames): the
    # postings are millions of small acyclic tuples and lists, and the collections their allocation
    # triggers walk them all again — at 10,000 capabilities more than half of the build time (ADR 0076).
    paused = len(capabilities) > _PAUSE_COLLECTOR_ABOVE and gc.isenabled()
    if paused:
        gc.disable()
    try:
        return _build_index(capabilities, keywords)
    finally:
        if paused:
            gc.enable()


def _build_index(capabilities: Sequence[Capability], keywords: CompiledKeywords) -> SearchIndex:
    memo = _MemoTerms()
    fields = [memo.fields(c, keywords) for c in capabilities]
    averages = {f: max(1.0, sum(len(doc[f]) for doc in fields) / max(1, len(fields))) for f in FIELD_WEIGHTS}
    postings: dict[str, list[tuple[int, float]]] = {}
    pairs: dict[str, dict[str, list[tuple[int, float]]]] = {}
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
        found = _pairs(doc)
        for first, second in sorted(found):
            pairs.setdefault(first, {}).setdefault(second, []).append((doc_id, found[first, second]))
    total = len(capabilities)
    idf = {t: math.log(1 + (total - len(p) + 0.5) / (len(p) + 0.5)) for t, p in postings.items()}
    exact: dict[str, list[int]] = {}
    for doc_id, capability in enumerate(capabilities):
        for key in dict.fromkeys((capability.name.lower(), capability.identity.lower())):
            exact.setdefault(key, []).append(doc_id)
    own = [name_words(doc) for doc in fields]
    named_by: dict[str, list[int]] = {}
    for doc_id, words_of_name in enumerate(own):
        for word in sorted(set(words_of_name)):
            named_by.setdefault(word, []).append(doc_id)
    return SearchIndex(
        exact={k: tuple(v) for k, v in exact.items()},
        identities=tuple(c.identity for c in capabilities),
        names=tuple(c.name for c in capabilities),
        postings={t: tuple(p) for t, p in postings.items()},
        idf=idf,
        keywords=keywords,
        pairs={a: {b: tuple(docs) for b, docs in inner.items()} for a, inner in pairs.items()},
        name_words=tuple(frozenset(w) for w in own),
        named_by={k: tuple(v) for k, v in named_by.items()},
        actions=tuple(_action(w, doc["description"], keywords) for w, doc in zip(own, fields, strict=True)),
    )


def index_inputs(capabilities: Sequence[Capability], keywords: CompiledKeywords) -> bytes:
    """Everything :func:`build_index` reads, as bytes: equal bytes give an equal index (the cache key).

    Kind and contract revision too, though the index reads neither today: a later reader of them must
    not meet an entry keyed without them. Sets are written sorted, so the bytes do not depend on the
    process's string hashing. Raises ``TypeError`` for keywords holding something not plain data.
    """
    documents = [[c.identity, c.name, c.source, c.parameters, c.description, c.kind, c.revision] for c in capabilities]
    return canonical_bytes({"documents": documents, "keywords": _plain(attrs.asdict(keywords, recurse=False))})


def _plain(value: object) -> object:
    if isinstance(value, frozenset | set):
        return sorted(value)
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    if value is None or isinstance(value, str | int | float):
        return value
    raise TypeError(f"not plain data: {type(value).__name__}")


def encode_index(index: SearchIndex) -> bytes:
    """``index`` as a versioned orjson document (without its keywords: they are part of the cache key).

    Mapping order is kept, and floats are written in their shortest exact form, so
    :func:`decode_index` gives back an equal index that ranks byte-identically.
    """
    return orjson.dumps(
        {
            "version": INDEX_FORMAT,
            "identities": index.identities,
            "names": index.names,
            "postings": index.postings,
            "idf": index.idf,
            "exact": index.exact,
            "pairs": index.pairs,
            "name_words": [sorted(w) for w in index.name_words],
            "named_by": index.named_by,
            "actions": [sorted(a) for a in index.actions],
        }
    )


def decode_index(payload: bytes, keywords: CompiledKeywords) -> SearchIndex | None:
    """The index :func:`encode_index` wrote, or ``None`` if ``payload`` is not one of this format."""
    paused = gc.isenabled()
    if paused:  # millions of small acyclic tuples again, as in build_index (ADR 0078)
        gc.disable()
    try:
        raw = orjson.loads(payload)
        if not isinstance(raw, dict) or raw.get("version") != INDEX_FORMAT:
            return None
        return SearchIndex(
            identities=tuple(raw["identities"]),
            names=tuple(raw["names"]),
            postings={t: _postings(p) for t, p in raw["postings"].items()},
            idf=raw["idf"],
            exact={k: tuple(v) for k, v in raw["exact"].items()},
            keywords=keywords,
            pairs={a: {b: _postings(d) for b, d in inner.items()} for a, inner in raw["pairs"].items()},
            name_words=tuple(frozenset(w) for w in raw["name_words"]),
            named_by={k: tuple(v) for k, v in raw["named_by"].items()},
            actions=tuple(frozenset(a) for a in raw["actions"]),
        )
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError, AttributeError):
        return None
    finally:
        if paused:
            gc.enable()


def _postings(raw: list[list[Any]]) -> tuple[tuple[int, float], ...]:
    return cast("tuple[tuple[int, float], ...]", tuple(map(tuple, raw)))


def cached_index(
    capabilities: Sequence[Capability], keywords: CompiledKeywords, cache: DiskCache | None
) -> SearchIndex:
    """:func:`build_index`, or the equal index a session stored for the same inputs and code (ADR 0078).

    Small catalogs (at most :data:`CACHE_ABOVE`) and ``cache=None`` always build. A damaged or foreign
    entry is rebuilt and stored again.
    """
    if cache is None or len(capabilities) <= CACHE_ABOVE:
        return build_index(capabilities, keywords)
    try:
        inputs = index_inputs(capabilities, keywords)
    except TypeError:  # a keyword index holding something that is not plain data: no safe key, so build
        return build_index(capabilities, keywords)
    key = cache_key([CACHE_KIND.encode(), inputs])
    payload = cache.load(CACHE_KIND, key)
    if payload is not None:
        found = decode_index(payload, keywords)
        if found is not None and found.identities == tuple(c.identity for c in capabilities):
            return found
    index = build_index(capabilities, keywords)
    cache.store(CACHE_KIND, key, encode_index(index))
    return index
