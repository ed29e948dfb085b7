"""How the demo prints: every line fits the terminal, and a program is shown whole (coloured on a terminal).

The demo is read by a person at a terminal, in a pipe, or in a CI log. A
:class:`View` knows the width to wrap to and whether colour is wanted (a
terminal, and ``NO_COLOR`` unset); it never cuts a program the model wrote,
it wraps it.
"""

from __future__ import annotations

import io
import keyword
import os
import shutil
import sys
import textwrap
import tokenize
from collections.abc import Callable, Iterator

import attrs

Printer = Callable[[str], None]

MIN_WIDTH = 40
"""Narrower than this, wrapping helps nobody: lines are wrapped at this width anyway."""

PROGRAM_GUTTER = "    │ "
"""Marks a program's lines apart from the demo's own words."""


@attrs.frozen(kw_only=True)
class View:
    """Where the demo's lines go, how wide they may be, whether they are coloured, how much is said."""

    out: Printer
    width: int = 100
    color: bool = False
    verbose: bool = False

    @classmethod
    def for_terminal(cls, out: Printer = print, *, verbose: bool = False) -> View:
        """The view of standard output: its width, colour only on a terminal without ``NO_COLOR``."""
        color = sys.stdout.isatty() and not os.environ.get("NO_COLOR")
        return cls(out=out, width=shutil.get_terminal_size((100, 24)).columns, color=color, verbose=verbose)

    def line(self, text: str) -> None:
        """Print ``text``, each of its lines wrapped to the width under its own indent."""
        for raw in text.splitlines() or [""]:
            for piece in wrapped(raw, self.width):
                self.out(piece)

    def detail(self, text: str) -> None:
        """A line only ``--verbose`` shows."""
        if self.verbose:
            self.line(text)

    def clip(self, text: str, indent: int = 0) -> str:
        """``text`` on one line, cut with ``…`` to fit the width after ``indent`` columns."""
        room = max(self.width, MIN_WIDTH) - indent
        flat = text.replace("\n", "\\n")
        return flat if len(flat) <= room else flat[: room - 1] + "…"

    def program(self, code: str) -> None:
        """A program whole: every line under the gutter, wrapped to the width, highlighted when colour is on."""
        room = max(self.width, MIN_WIDTH) - len(PROGRAM_GUTTER)
        for segments in program_lines(code, room):
            if self.color:
                shown = "".join(f"\x1b[{_SGR[kind]}m{value}\x1b[0m" if kind else value for kind, value in segments)
            else:
                shown = "".join(value for _, value in segments)
            self.out(PROGRAM_GUTTER + shown)


def wrapped(text: str, width: int) -> list[str]:
    """``text`` wrapped to ``width`` columns; continuation lines keep its indent plus two spaces."""
    width = max(width, MIN_WIDTH)
    if len(text) <= width:
        return [text]
    indent = text[: len(text) - len(text.lstrip(" "))]
    return textwrap.wrap(
        text,
        width=width,
        initial_indent="",
        subsequent_indent=indent + "  ",
        break_long_words=True,
        break_on_hyphens=False,
        drop_whitespace=True,
    ) or [text]


Segment = tuple[str, str]
"""A run of a program line's text and its kind (``""`` plain, else a key of :data:`_SGR`)."""

_SGR = {"keyword": "1;34", "string": "32", "comment": "90", "number": "36"}
"""Terminal colours by kind: ANSI select-graphic-rendition codes every terminal knows."""

CONTINUATION = "    "
"""A wrapped program line goes on under this indent, so it is not mistaken for a line of its own."""


def program_lines(code: str, width: int) -> Iterator[list[Segment]]:
    """The program's lines as coloured segments; a line longer than ``width`` goes on in the next, broken
    after a space where one is near the end, else at the width.

    The whole program is tokenized first (the standard library's tokenizer), so a string or comment that
    wraps keeps its colour.
    """
    width = max(width, MIN_WIDTH // 2)
    lines = code.rstrip("\n").split("\n")
    kinds = _kinds(code, lines)
    for number, line in enumerate(lines):
        segments: list[Segment] = []
        for column, char in enumerate(line):
            kind = kinds.get((number, column), "")
            if segments and segments[-1][0] == kind:
                segments[-1] = (kind, segments[-1][1] + char)
            else:
                segments.append((kind, char))
        yield from _wrapped_segments(segments, width)


def _kinds(code: str, lines: list[str]) -> dict[tuple[int, int], str]:
    """The kind of every coloured character, by (line, column); nothing when the text does not tokenize."""
    found: dict[tuple[int, int], str] = {}
    try:
        for token in tokenize.generate_tokens(io.StringIO(code).readline):
            if token.type == tokenize.NAME and (keyword.iskeyword(token.string) or token.string in ("await",)):
                kind = "keyword"
            elif token.type == tokenize.STRING or token.type in _FSTRING:
                kind = "string"
            else:
                kind = {tokenize.COMMENT: "comment", tokenize.NUMBER: "number"}.get(token.type, "")
            if not kind:
                continue
            (row, col), (end_row, end_col) = token.start, token.end
            for line in range(row - 1, end_row):
                if line >= len(lines):
                    break
                first = col if line == row - 1 else 0
                last = end_col if line == end_row - 1 else len(lines[line])
                for column in range(first, last):
                    found[(line, column)] = kind
    except (tokenize.TokenError, SyntaxError):  # an unfinished program: shown plain, never refused
        return {}
    return found


_FSTRING = {
    getattr(tokenize, name) for name in ("FSTRING_START", "FSTRING_MIDDLE", "FSTRING_END") if hasattr(tokenize, name)
}


def _wrapped_segments(line: list[Segment], width: int) -> Iterator[list[Segment]]:
    text = "".join(value for _, value in line)
    start, room = 0, width
    spans: list[tuple[int, int]] = []
    while len(text) - start > room:
        space = text.rfind(" ", start, start + room + 1)
        if space - start >= room // 2:  # break at the space, which neither line keeps
            spans.append((start, space))
            start = space + 1
        else:
            spans.append((start, start + room))
            start += room
        room = width - len(CONTINUATION)
    spans.append((start, len(text)))
    for number, (low, high) in enumerate(spans):
        piece: list[Segment] = [("", CONTINUATION)] if number else []
        position = 0
        for kind, value in line:
            end = position + len(value)
            if end > low and position < high:
                piece.append((kind, value[max(low - position, 0) : high - position]))
            position = end
        yield piece
