"""Where a key path is written in TOML text: its line and column, for config problems.

tomllib gives positions only for syntax errors, and tomlkit none at all, so
valid text is scanned here once: every table header and every ``key =``
outside strings, arrays and inline tables is recorded with the position of
its first character. Key text is decoded by tomllib itself (``<key> = 0``),
so quoting and escapes mean exactly what the loader read. A path that is not
written literally (a key inside an inline table, an array item) is placed at
its nearest written ancestor.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from typing import Any

import attrs

_AT = re.compile(r"\s*\(at line (\d+), column (\d+)\)$")
_INDEX = re.compile(r"\[\d+\]$")


@attrs.frozen
class Position:
    """1-based line and column."""

    line: int
    column: int


def syntax_position(detail: str) -> tuple[str, Position | None]:
    """tomllib's message without its ``(at line L, column C)`` tail, and that position."""
    found = _AT.search(detail)
    if found is None:
        return detail, None
    return detail[: found.start()], Position(int(found.group(1)), int(found.group(2)))


def key_positions(text: str) -> dict[tuple[str, ...], Position]:
    """Key path -> where it is written, for every header and ``key =`` of valid TOML ``text``."""
    return _Scanner(text).scan()


def nesting_position(text: str, limit: int) -> Position | None:
    """Where ``text`` first nests deeper than ``limit`` levels (tables, dotted keys, arrays and inline tables
    counted together), or ``None``; for text too deep to parse, so syntax it cannot judge is skipped as usual."""
    scanner = _Scanner(text, limit)
    scanner.scan()
    return scanner.too_deep


def locate(positions: Mapping[tuple[str, ...], Position], path: str) -> Position | None:
    """The position of dotted ``path`` (as :func:`.keypath.join` writes it), else of its nearest ancestor."""
    parts = _parts(path)
    while parts:
        if parts in positions:
            return positions[parts]
        parts = parts[:-1]
    return None


def _parts(path: str) -> tuple[str, ...]:
    path = _INDEX.sub("", path)
    if not path:
        return ()
    decoded = _decode_key(path)
    return decoded if decoded is not None else (path,)


def _decode_key(raw: str) -> tuple[str, ...] | None:
    try:
        value: Any = tomllib.loads(f"{raw} = 0")
    except tomllib.TOMLDecodeError:
        return None
    parts: list[str] = []
    while isinstance(value, dict) and len(value) == 1:
        key, value = next(iter(value.items()))
        parts.append(key)
    return tuple(parts)


class _Scanner:
    """One pass over the characters; positions are recorded at statement starts only."""

    def __init__(self, text: str, limit: int | None = None) -> None:
        self.text = text
        self.limit = limit
        self.too_deep: Position | None = None
        self.index = 0
        self.line = 1
        self.line_start = 0
        self.table: tuple[str, ...] = ()
        self.found: dict[tuple[str, ...], Position] = {}

    def scan(self) -> dict[tuple[str, ...], Position]:
        while self.index < len(self.text) and self.too_deep is None:
            self._skip_blank()
            if self.index >= len(self.text):
                break
            char = self.text[self.index]
            if char == "#":
                self._skip_comment()
            elif char == "[":
                self._header()
            else:
                self._key_value()
        return self.found

    def _position(self) -> Position:
        return Position(self.line, self.index - self.line_start + 1)

    def _advance(self, count: int = 1) -> None:
        for _ in range(count):
            if self.index < len(self.text) and self.text[self.index] == "\n":
                self.line += 1
                self.line_start = self.index + 1
            self.index += 1

    def _skip_blank(self) -> None:
        while self.index < len(self.text) and self.text[self.index] in " \t\r\n":
            self._advance()

    def _skip_comment(self) -> None:
        while self.index < len(self.text) and self.text[self.index] != "\n":
            self._advance()

    def _key_text(self, stop: str) -> str:
        """Raw key text up to (not including) ``stop``, outside quotes."""
        start = self.index
        while self.index < len(self.text) and self.text[self.index] != stop:
            if self.text[self.index] in "\"'":
                self._string()
            else:
                self._advance()
        return self.text[start : self.index]

    def _header(self) -> None:
        where = self._position()
        array = self.text.startswith("[[", self.index)
        self._advance(2 if array else 1)
        raw = self._key_text("]")
        self._advance(2 if array else 1)
        parts = _decode_key(raw.strip())
        if parts is not None:
            self.table = parts
            self._depth(len(parts), where)
            for depth in range(1, len(parts) + 1):
                self.found.setdefault(parts[:depth], where)

    def _key_value(self) -> None:
        where = self._position()
        raw = self._key_text("=")
        self._advance()
        parts = _decode_key(raw.strip())
        levels = len(self.table) + (len(parts) if parts is not None else 1)
        if parts is not None:
            for depth in range(1, len(parts) + 1):
                self.found.setdefault((*self.table, *parts[:depth]), where)
        self._depth(levels, where)
        self._value(levels)

    def _depth(self, levels: int, where: Position) -> None:
        if self.limit is not None and self.too_deep is None and levels > self.limit:
            self.too_deep = where

    def _value(self, levels: int = 0) -> None:
        """Skip one value (strings, nested arrays and inline tables included) and the rest of its line."""
        depth = 0
        while self.index < len(self.text):
            char = self.text[self.index]
            if char in "\"'":
                self._string()
            elif char == "#":
                self._skip_comment()
            elif char in "[{":
                depth += 1
                self._depth(levels + depth, self._position())
                self._advance()
            elif char in "]}":
                depth -= 1
                self._advance()
            elif char == "\n" and depth <= 0:
                return
            else:
                self._advance()

    def _string(self) -> None:
        quote = self.text[self.index]
        if self.text.startswith(quote * 3, self.index):
            self._advance(3)
            end = self.text.find(quote * 3, self.index)
            end = len(self.text) if end < 0 else end
            # A closing run may hold up to two more quotes that belong to the content.
            while self.text.startswith(quote, end + 3):
                end += 1
            self._skip_escaped_until(end, quote == '"')
            self._advance(3)
            return
        self._advance()
        while self.index < len(self.text) and self.text[self.index] not in (quote, "\n"):
            if quote == '"' and self.text[self.index] == "\\":
                self._advance()
            self._advance()
        self._advance()

    def _skip_escaped_until(self, end: int, escapes: bool) -> None:
        while self.index < end:
            if escapes and self.text[self.index] == "\\":
                self._advance()
            self._advance()
        if self.index > end:  # an escaped quote moved the closing run on
            closing = self.text.find('"""', self.index)
            self._skip_escaped_until(len(self.text) if closing < 0 else closing, escapes)
