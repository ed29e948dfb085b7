"""How the demo prints: every line fits the terminal, and a program is shown whole (highlighted on a terminal).

The demo is read by a person at a terminal, in a pipe, or in a CI log. A
:class:`View` knows the width to wrap to and whether colour is wanted (a
terminal, and ``NO_COLOR`` unset); it never cuts a program the model wrote,
it wraps it.
"""

from __future__ import annotations

import os
import shutil
import sys
import textwrap
from collections.abc import Callable, Iterator

import attrs
from pygments import format as format_tokens
from pygments import lex
from pygments.formatters import TerminalFormatter
from pygments.lexers import PythonLexer
from pygments.token import Token, _TokenType

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
            text = "".join(value for _, value in segments)
            shown = format_tokens(segments, TerminalFormatter()) if self.color else text
            self.out(PROGRAM_GUTTER + shown.rstrip("\n"))


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


Segment = tuple[_TokenType, str]

CONTINUATION = "    "
"""A wrapped program line goes on under this indent, so it is not mistaken for a line of its own."""


def program_lines(code: str, width: int) -> Iterator[list[Segment]]:
    """The program's lines as highlighted segments; a line longer than ``width`` goes on in the next, broken
    after a space where one is near the end, else at the width.

    Lexing the whole program first keeps a string or comment that wraps coloured as one token.
    """
    width = max(width, MIN_WIDTH // 2)
    line: list[Segment] = []
    for kind, value in lex(code.rstrip("\n") + "\n", PythonLexer()):
        for index, part in enumerate(value.split("\n")):
            if index:
                yield from _wrapped_segments(line, width)
                line = []
            if part:
                line.append((kind, part))


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
        piece: list[Segment] = [(Token.Text, CONTINUATION)] if number else []
        position = 0
        for kind, value in line:
            end = position + len(value)
            if end > low and position < high:
                piece.append((kind, value[max(low - position, 0) : high - position]))
            position = end
        yield piece
