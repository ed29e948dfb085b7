"""The editable keyword index: synonym groups, query-term expansions and per-capability keywords.

Stored as JSON (``{"version": 1, "groups": [...], "terms": {...},
"capabilities": {...}, "actions": {...}}``). ``groups`` are English synonym
sets (any member finds the others); ``terms`` expand a query term in any
language (a Chinese word to the English words tool authors use; an English
term of several words, such as the casual verb ``spin up``, is a phrase that
only its whole matches, so ``up`` alone gains nothing); ``capabilities`` add
keywords to one capability by identity; ``actions`` name *action classes*
(``family.class``, e.g. ``read.list``) and their English verbs, so the ranker
can tell ``create_issue`` from ``list_issues`` (ADR 0026).
``actions`` is optional: files written before it existed still load. The
shipped index is ``keywords.json`` beside this module; a workspace or user
file is merged over it.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path

import attrs
import cattrs
import orjson

from hookspecs.serialization import canonical_bytes, structure
from ptc_plus.discovery.errors import InvalidKeywordIndex
from ptc_plus.discovery.terms import cjk_runs, is_cjk, latin_words, terms

FORMAT_VERSION = 1
DEFAULT_PATH = Path(__file__).with_name("keywords.json")


@attrs.frozen(kw_only=True)
class KeywordIndex:
    """Editable keyword data. Change it with the ``with_*`` methods (new values, never mutation)."""

    version: int = FORMAT_VERSION
    groups: tuple[tuple[str, ...], ...] = ()
    terms: Mapping[str, tuple[str, ...]] = attrs.field(factory=dict)
    capabilities: Mapping[str, tuple[str, ...]] = attrs.field(factory=dict)
    actions: Mapping[str, tuple[str, ...]] = attrs.field(factory=dict)
    """Action class (``family.class`` or ``family``) → its verbs."""

    def with_term(self, term: str, expansions: Iterable[str]) -> KeywordIndex:
        """Add (or extend) the expansions of one query term."""
        merged = dict(self.terms)
        merged[term] = tuple(dict.fromkeys([*merged.get(term, ()), *expansions]))
        return attrs.evolve(self, terms=merged)

    def with_group(self, words: Iterable[str]) -> KeywordIndex:
        return attrs.evolve(self, groups=(*self.groups, tuple(words)))

    def with_keywords(self, identity: str, words: Iterable[str]) -> KeywordIndex:
        """Add keywords to one capability."""
        merged = dict(self.capabilities)
        merged[identity] = tuple(dict.fromkeys([*merged.get(identity, ()), *words]))
        return attrs.evolve(self, capabilities=merged)

    def with_action(self, action: str, verbs: Iterable[str]) -> KeywordIndex:
        """Add verbs to one action class (``family.class``; the family is the part before the dot)."""
        merged = dict(self.actions)
        merged[action] = tuple(dict.fromkeys([*merged.get(action, ()), *verbs]))
        return attrs.evolve(self, actions=merged)

    def merged(self, other: KeywordIndex) -> KeywordIndex:
        """``self`` extended by ``other`` (other's entries add to, never remove, ours)."""
        result = self
        for group in other.groups:
            result = result.with_group(group)
        for term, expansions in other.terms.items():
            result = result.with_term(term, expansions)
        for identity, words in other.capabilities.items():
            result = result.with_keywords(identity, words)
        for action, verbs in other.actions.items():
            result = result.with_action(action, verbs)
        return result


def load_keyword_index(path: Path) -> KeywordIndex:
    """Read a keyword index file; raises :class:`InvalidKeywordIndex` with the reason."""
    try:
        raw = orjson.loads(path.read_bytes())
        if not isinstance(raw, dict) or raw.get("version") != FORMAT_VERSION:
            raise ValueError(f"expected an object with version {FORMAT_VERSION}")
        _check_shape(raw)
        return structure(raw, KeywordIndex)
    except (OSError, ValueError, cattrs.BaseValidationError) as exc:
        detail = "; ".join(cattrs.transform_error(exc)) if isinstance(exc, cattrs.BaseValidationError) else str(exc)
        raise InvalidKeywordIndex(path=str(path), detail=detail) from exc


def _is_words(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(w, str) for w in value)


def _check_shape(raw: dict[str, object]) -> None:
    """cattrs would happily read a string as a list of characters: check the JSON shape first."""
    groups = raw.get("groups", [])
    if not isinstance(groups, list) or not all(_is_words(g) for g in groups):
        raise ValueError("'groups' must be a list of lists of words")
    for key in ("terms", "capabilities", "actions"):
        table = raw.get(key, {})
        if not isinstance(table, dict) or not all(_is_words(v) for v in table.values()):
            raise ValueError(f"{key!r} must map text to a list of words")


def save_keyword_index(index: KeywordIndex, path: Path) -> None:
    """Write ``index`` atomically (sorted keys, so edits diff cleanly)."""
    blob = canonical_bytes(index, indent=True) + b"\n"
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    with os.fdopen(fd, "wb") as fh:
        fh.write(blob)
    os.replace(tmp, path)


def default_keyword_index(extra: Iterable[Path] = ()) -> KeywordIndex:
    """The shipped index, with each file in ``extra`` merged over it in order."""
    index = load_keyword_index(DEFAULT_PATH)
    for path in extra:
        index = index.merged(load_keyword_index(path))
    return index


@attrs.frozen(kw_only=True)
class CompiledKeywords:
    """The keyword index prepared for look-ups in search terms (see :mod:`terms`)."""

    latin: Mapping[str, frozenset[str]]
    cjk: Mapping[str, Mapping[str, int]]
    """CJK word → each search term of its expansions, with the position of the first expansion giving it
    (authors list the closest translation first)."""
    capability_terms: Mapping[str, tuple[str, ...]]
    max_cjk: int
    actions: Mapping[str, frozenset[str]] = attrs.field(factory=dict)
    """Stemmed verb → the action classes it names."""
    phrases: Mapping[str, Mapping[str, int]] = attrs.field(factory=dict)
    """A Latin term of several words, its stems joined by one space (``spin up``) → its expansions' terms
    with positions, as :attr:`cjk`: the words mean something together that none of them means alone.
    String keys, so the compiled index stays plain data."""
    max_phrase: int = 0
    """Words in the longest key of :attr:`phrases`."""

    def cjk_matches(self, run: str) -> list[str]:
        """Every dictionary word found inside a CJK run (all overlapping matches)."""
        found: list[str] = []
        for start in range(len(run)):
            for size in range(min(self.max_cjk, len(run) - start), 0, -1):
                word = run[start : start + size]
                if word in self.cjk:
                    found.append(word)
        return found


def compile_keywords(index: KeywordIndex) -> CompiledKeywords:
    """Prepare ``index`` for the ranker (stemmed English keys, CJK keys verbatim)."""
    latin: dict[str, set[str]] = {}
    cjk: dict[str, dict[str, int]] = {}
    phrases: dict[str, dict[str, int]] = {}
    for group in index.groups:
        stems = {w for word in group for w in latin_words(word)}
        for word in stems:
            latin.setdefault(word, set()).update(stems - {word})
    for term, expansions in index.terms.items():
        expanded = {t for e in expansions for t in terms(e)}
        if term and is_cjk(term[0]):
            for run in cjk_runs(term):
                ranks = cjk.setdefault(run, {})
                for position, expansion in enumerate(expansions):
                    for word in terms(expansion):
                        ranks[word] = min(ranks.get(word, position), position)
        elif len(key := latin_words(term)) > 1:
            ranks = phrases.setdefault(" ".join(key), {})
            for position, expansion in enumerate(expansions):
                for word in terms(expansion):
                    ranks[word] = min(ranks.get(word, position), position)
        else:
            for word in key:
                latin.setdefault(word, set()).update(expanded - {word})
    capability_terms = {i: tuple(t for w in words for t in terms(w)) for i, words in index.capabilities.items()}
    actions: dict[str, set[str]] = {}
    for action, verbs in index.actions.items():
        for word in (w for verb in verbs for w in latin_words(verb)):
            actions.setdefault(word, set()).add(action)
    return CompiledKeywords(
        actions={k: frozenset(v) for k, v in actions.items()},
        latin={k: frozenset(v) for k, v in latin.items()},
        cjk=cjk,
        capability_terms=capability_terms,
        max_cjk=max((len(k) for k in cjk), default=0),
        phrases=phrases,
        max_phrase=max((k.count(" ") + 1 for k in phrases), default=0),
    )
