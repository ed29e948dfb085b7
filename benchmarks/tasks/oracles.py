"""How oracles read a free-text answer: tolerant of wording, strict about the facts.

The rule every oracle applies (:func:`verdict`):

1. **One stated answer, and it is right.** The expected numbers and names
   appear (numbers within a stated tolerance, thousands separators ignored).
2. **Nothing wrong is named.** Every value of the asked kind that the answer
   states must be an allowed one: every amount in the asked unit
   (:func:`amounts`: ``12.50 EUR``, ``42.2 km``), every id of the asked kind
   (:func:`ids`: ``p-012``), every value written after a label
   (:func:`stated_after`: the number after "gross"). Listing every candidate
   is not choosing one, and names a wrong one.
3. **Hedges fail** (:data:`HEDGES`): "about", "approximately", "around",
   "roughly", "nearly", "between X and Y", "either ... or", "I think",
   "I believe", "might", "may be", "maybe", "perhaps", "probably", "likely",
   "possibly", "could be", "estimate", "~", "≈", "not sure". An answer that
   hedges has not stated one value, even when the right one is among its
   words.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterable
from pathlib import Path

from ptc_plus.evaluation.task import Verdict

_DIGITS = r"\d(?:\d|,\d{3})*(?:\.\d+)?"
_NUMBER = re.compile(rf"(?<![\w.-])-?{_DIGITS}(?![\w-])")
# Not a number: a digit run glued to a letter or a dash on either side (ids: p-012, o-0042, c-007).

HEDGES: tuple[str, ...] = (
    r"\babout\b",
    r"\bapprox",
    r"\baround\b",
    r"\broughly\b",
    r"\bnearly\b",
    r"\balmost\b",
    r"\bor so\b",
    r"\bbetween\b(?:[^.;]|\.\d)*\band\b",
    r"\beither\b(?:[^.;]|\.\d)*\bor\b",
    r"\bi think\b",
    r"\bi believe\b",
    r"\bmight\b",
    r"\bmay be\b",
    r"\bmaybe\b",
    r"\bperhaps\b",
    r"\bprobably\b",
    r"\blikely\b",
    r"\bpossibly\b",
    r"\bcould be\b",
    r"\bestimat",
    r"~",
    r"≈",
    r"\bnot sure\b",
)
"""Words and shapes that hedge an answer (matched case-insensitively); any one fails it."""


def numbers(text: str) -> list[float]:
    """Every number written in ``text`` (``1,234.5`` is 1234.5; ids like ``p-012`` are not numbers)."""
    return [float(m.group().replace(",", "")) for m in _NUMBER.finditer(text)]


def hedges(text: str) -> list[str]:
    """The hedges in ``text`` (empty when it states its values plainly)."""
    return [found.group() for pattern in HEDGES if (found := re.search(pattern, text, re.IGNORECASE))]


def amounts(text: str, unit: str) -> list[float]:
    """Every number written right before ``unit`` (``12.50 EUR``, ``3kg``): the values of that kind stated."""
    pattern = rf"(?<![\w.-])(-?{_DIGITS})\s*{re.escape(unit)}(?!\w)"
    return [float(m.group(1).replace(",", "")) for m in re.finditer(pattern, text, re.IGNORECASE)]


def stated_after(text: str, label: str) -> list[float]:
    """For each place ``label`` is written (a whole word), the first number after it in the same clause."""
    found = []
    for m in re.finditer(rf"\b{re.escape(label)}\b", text, re.IGNORECASE):
        clause = re.split(r"[;!?]|\.(?!\d)", text[m.end() :], maxsplit=1)[0]
        first = _NUMBER.search(clause)
        if first is not None:
            found.append(float(first.group().replace(",", "")))
    return found


def only(values: Iterable[float], allowed: Iterable[float], tolerance: float = 0.005) -> list[float]:
    """The values not within ``tolerance`` of an allowed one (empty: nothing wrong is stated)."""
    permitted = list(allowed)
    return [v for v in values if not any(abs(v - a) <= tolerance for a in permitted)]


def ids(text: str, prefix: str) -> set[str]:
    """The record ids of one kind named in ``text`` (``prefix`` ``p``: ``p-012``)."""
    return set(re.findall(rf"(?<![\w-]){re.escape(prefix)}-\d+(?![\w-])", text))


def has_number(text: str, expected: float, tolerance: float = 0.005) -> bool:
    """Whether ``text`` states ``expected`` (within ``tolerance``)."""
    return any(abs(found - expected) <= tolerance for found in numbers(text))


def judge(checks: Iterable[tuple[bool, str]]) -> Verdict:
    """Pass when every check holds; otherwise the reasons of the failed ones."""
    failed = [reason for ok, reason in checks if not ok]
    return Verdict(passed=not failed, reason="; ".join(failed))


def verdict(answer: str, checks: Iterable[tuple[bool, str]]) -> Verdict:
    """:func:`judge` of ``checks`` and of the rule every answer meets: no hedge (:data:`HEDGES`)."""
    hedged = hedges(answer)
    return judge([(not hedged, f"the answer hedges ({', '.join(hedged)})"), *checks])


def notes_in(workspace: Path) -> list[tuple[str, str, list[str]]]:
    """The demo notes store's notes as ``(title, body, tags)``, read from its file (empty when there is none)."""
    store = workspace / ".demo" / "notes.sqlite"
    if not store.exists():
        return []
    conn = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    try:
        rows = conn.execute("SELECT title, body, tags FROM notes ORDER BY id").fetchall()
    finally:
        conn.close()
    return [(title, body, [t for t in tags.split(",") if t]) for title, body, tags in rows]
