"""How oracles read a free-text answer: tolerant of wording, strict about the facts.

An answer passes when the expected numbers and names appear in it (numbers
within a stated tolerance, thousands separators ignored) and, where a task
lists a set, when nothing outside the set that could be confused with it does.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterable
from pathlib import Path

from ptc_plus.evaluation.task import Verdict

_NUMBER = re.compile(r"(?<![\w.])-?\d[\d,]*(?:\.\d+)?")


def numbers(text: str) -> list[float]:
    """Every number written in ``text`` (``1,234.5`` is 1234.5; ids like ``p-012`` are not numbers)."""
    return [float(m.group().replace(",", "")) for m in _NUMBER.finditer(text)]


def has_number(text: str, expected: float, tolerance: float = 0.005) -> bool:
    """Whether ``text`` states ``expected`` (within ``tolerance``)."""
    return any(abs(found - expected) <= tolerance for found in numbers(text))


def judge(checks: Iterable[tuple[bool, str]]) -> Verdict:
    """Pass when every check holds; otherwise the reasons of the failed ones."""
    failed = [reason for ok, reason in checks if not ok]
    return Verdict(passed=not failed, reason="; ".join(failed))


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
