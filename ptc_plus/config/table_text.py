"""Remove one ``[table]`` from TOML text, keeping every neighbour's comments where a reader expects them.

tomlkit keeps a comment written above a table header inside the *previous*
table's body, so deleting a table through tomlkit leaves its own comment
behind (now seemingly about the next table) and takes the next table's
comment with it. Working on lines instead: the comment block directly above
the header goes with the table, the comments and blank lines at its end
(which introduce whatever follows) stay. The caller checks the result means
what tomlkit's edit means before using it.
"""

from __future__ import annotations

import tomllib
from collections.abc import Sequence
from typing import Any


def header_path(line: str) -> tuple[str, ...] | None:
    """The key path of a standard table header line (``[a."b"]  # note``), else ``None``."""
    stripped = line.strip()
    if not stripped.startswith("[") or stripped.startswith("[["):
        return None
    try:
        parsed: Any = tomllib.loads(stripped)
    except tomllib.TOMLDecodeError:
        return None
    path: list[str] = []
    while isinstance(parsed, dict) and len(parsed) == 1:
        key, parsed = next(iter(parsed.items()))
        path.append(key)
    return tuple(path) if path and parsed == {} else None


def _comment(line: str) -> bool:
    return line.lstrip().startswith("#")


def _blank(line: str) -> bool:
    return not line.strip()


def without_table(text: str, path: Sequence[str]) -> str | None:
    """``text`` without the table whose header is ``[path]``; ``None`` unless that header occurs exactly once."""
    lines = text.splitlines(keepends=True)
    headers = [index for index, line in enumerate(lines) if header_path(line) is not None]
    found = [index for index in headers if header_path(lines[index]) == tuple(path)]
    if len(found) != 1:
        return None
    start = found[0]
    end = next((index for index in headers if index > start), len(lines))
    while end > start + 1 and (_comment(lines[end - 1]) or _blank(lines[end - 1])):
        end -= 1
    first = start
    while first > 0 and _comment(lines[first - 1]):
        first -= 1
    before, after = lines[:first], lines[end:]
    while before and after and _blank(before[-1]) and _blank(after[0]):
        after = after[1:]
    return "".join(before + after)
