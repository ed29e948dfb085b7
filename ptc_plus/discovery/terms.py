"""Search terms from names and prose, English and CJK alike, without any model.

Latin text is split on ``_``, camelCase, ``.``, ``/``, ``-`` and spaces,
lower-cased, stripped of stop words and lightly stemmed (``branches`` →
``branch``, ``created`` → ``creat``). CJK runs become character bigrams (and
unigrams, which the ranker weighs low): segmentation without a dictionary.
"""

from __future__ import annotations

import re
import unicodedata
from typing import NamedTuple

_CJK_RANGES = (
    ("\u3040", "\u30ff"),  # kana
    ("\u3400", "\u4dbf"),
    ("\u4e00", "\u9fff"),
    ("\uac00", "\ud7af"),  # hangul
    ("\uf900", "\ufaff"),
)
_CJK_CLASS = "".join(f"{lo}-{hi}" for lo, hi in _CJK_RANGES)
_TOKEN = re.compile(rf"[{_CJK_CLASS}]+|[^\W_{_CJK_CLASS}]+", re.UNICODE)
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])|(?<=[A-Za-z])(?=[0-9])|(?<=[0-9])(?=[A-Za-z])")

STOP_WORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "by",
        "can",
        "do",
        "does",
        "for",
        "from",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "me",
        "my",
        "of",
        "on",
        "or",
        "our",
        "please",
        "should",
        "so",
        "some",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "this",
        "those",
        "to",
        "use",
        "used",
        "using",
        "via",
        "want",
        "we",
        "what",
        "when",
        "which",
        "who",
        "will",
        "with",
        "would",
        "you",
        "your",
    ]
)
CJK_STOP_CHARS = frozenset("的了吗呢吧啊把被和与或在是我你他她它们请帮个一这那哪些么什怎要想给用")

UNIGRAM_PREFIX = "1:"
"""Marks a CJK single-character term, kept apart so the ranker can weigh it low."""


def is_cjk(char: str) -> bool:
    return any(lo <= char <= hi for lo, hi in _CJK_RANGES)


def stem(word: str) -> str:
    """A light, deterministic English stemmer (plural and -ing/-ed forms meet their base)."""
    if len(word) <= 3 or not word.isascii() or not word.isalpha():
        return word
    for suffix, replacement in (("ies", "y"), ("ches", "ch"), ("shes", "sh"), ("sses", "ss"), ("xes", "x")):
        if word.endswith(suffix) and len(word) > len(suffix) + 1:
            return _drop_e(word[: -len(suffix)] + replacement)
    if word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    elif word.endswith("ing") and len(word) > 5:
        word = word[:-3]
    elif word.endswith("ed") and len(word) > 4:
        word = word[:-2]
    return _drop_e(word)


def _drop_e(word: str) -> str:
    return word[:-1] if len(word) > 4 and word.endswith("e") else word


def _latin_words(chunk: str) -> list[str]:
    return [w.lower() for w in _CAMEL.split(chunk) if w]


def cjk_terms(run: str) -> list[str]:
    """Bigrams of a CJK run, plus marked unigrams of its non-stop characters."""
    terms = [run[i : i + 2] for i in range(len(run) - 1)]
    terms += [UNIGRAM_PREFIX + c for c in run if c not in CJK_STOP_CHARS]
    return terms


def terms(text: str) -> list[str]:
    """All search terms of ``text`` in order (duplicates kept: term frequency matters)."""
    result: list[str] = []
    for chunk in _TOKEN.findall(unicodedata.normalize("NFKC", text)):
        if is_cjk(chunk[0]):
            result.extend(cjk_terms(chunk))
            continue
        for word in _latin_words(chunk):
            if word not in STOP_WORDS:
                result.append(stem(word))
    return result


def cjk_runs(text: str) -> list[str]:
    """The CJK runs of ``text`` (for dictionary look-ups by the query analyser)."""
    return [c for c in _TOKEN.findall(unicodedata.normalize("NFKC", text)) if is_cjk(c[0])]


def latin_words(text: str) -> list[str]:
    """Lower-cased, stemmed Latin words of ``text`` without stop words."""
    return [t for t in terms(text) if not is_cjk(t[0]) and not t.startswith(UNIGRAM_PREFIX)]


_CONTRACTION = re.compile(r"n['\u2019]t\b|(?<=[A-Za-z])['\u2019](?:s|re|ve|ll|d|m)\b", re.IGNORECASE)
""""what's", "don't", "we'll": the clitic is grammar, and a bare "s" would find every S3 tool."""
_SPAN = re.compile(rf"[^\s{_CJK_CLASS}]+")
_SNAKE = re.compile(r"[^\W_]+(?:_+[^\W_]+)+")
_INNER_CAPITAL = re.compile(r"[a-z]+[A-Z][A-Za-z0-9]*")
_DOTTED = re.compile(r"[^\W_]+(?:\.[^\W_]+)+")


class QueryWord(NamedTuple):
    """One Latin word of a query: its stemmed pieces, and the code identifier it came from.

    Several pieces are one glued chunk of letters and digits (``s3``, ``ec2``, ``3f2``): a
    capability matches it only by holding every piece, so a hash or cell reference finds
    nothing rather than every tool with a digit in its name. ``identifier`` is the user's own
    data the word came from: the lower-cased code identifier (``parse_config``, ``handleRequest``)
    it was split from, or the bare number itself; ``""`` for prose.
    """

    pieces: tuple[str, ...]
    identifier: str = ""


def _chunk_words(text: str, identifier: str) -> list[QueryWord]:
    found: list[QueryWord] = []
    for chunk in _TOKEN.findall(text):
        if is_cjk(chunk[0]):
            continue
        pieces = _latin_words(chunk)
        if all(p.isdigit() for p in pieces):
            # A bare number is data ("6 foot 2", "2300 元"), marked like an identifier: it counts only alone.
            found += [QueryWord((p,), identifier or p) for p in pieces]
            continue
        if any(p.isdigit() for p in pieces):
            found.append(QueryWord(tuple(stem(p) for p in pieces), identifier))
            continue
        found += [QueryWord((stem(p),), identifier) for p in pieces if p not in STOP_WORDS]
    return found


def query_words(text: str) -> list[QueryWord]:
    """The Latin words of a query, in order, cleaned of what is data rather than a description.

    Contractions lose their clitic; letters glued to digits stay one word; a dotted name
    (``budget.xlsx``, ``blog.example.com``, ``1.2.3.4``) keeps only its last part, which says
    what kind of thing it is; code identifiers (snake_case, camelCase) and bare numbers are
    marked (:attr:`QueryWord.identifier`) so the ranker can tell the user's own data from
    words describing a tool.
    """
    words: list[QueryWord] = []
    normal = _CONTRACTION.sub("", unicodedata.normalize("NFKC", text))
    for span in _SPAN.findall(normal):
        for part in re.split(r"[^\w.]+", span):
            part = part.strip("._")
            if not part:
                continue
            if _SNAKE.fullmatch(part) or _INNER_CAPITAL.fullmatch(part):
                words += _chunk_words(part, part.lower())
            elif _DOTTED.fullmatch(part):
                words += _chunk_words(part.rsplit(".", 1)[1], "")
            else:
                words += _chunk_words(part, "")
    return words
