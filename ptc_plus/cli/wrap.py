"""The chat's own prose, wrapped to the terminal's width at word boundaries.

A terminal breaks a line wider than itself at whatever column it reaches,
mid-word ("sta" / "te."); the chat breaks its own lines first. Widths are in
terminal columns: an East Asian wide or fullwidth character takes two, a
combining mark none, a colour escape none. A break goes at a space, or
between wide characters (Chinese puts no spaces between words), never before
closing punctuation (``，。`` and the like must not start a line); a word
wider than the line is left whole rather than split. Code is never wrapped: a
block whose text is JSON, a line that is JSON, the lines between ``````` fences.
Output that is not a terminal is never wrapped: a script reads lines as they are.
"""

from __future__ import annotations

import os
import re
import sys
import unicodedata
from typing import IO

import click
import orjson

_ESCAPE = re.compile(r"\x1b\[[0-9;]*m")
_TOKEN = re.compile(r"\s+|[^\s]")
_NO_LINE_START = frozenset("，。、；：！？）」』】〕》〉,.;:!?)]}%")
FENCE = "```"


def char_columns(char: str) -> int:
    """Columns one character takes on a terminal."""
    if unicodedata.combining(char) or unicodedata.category(char) in ("Mn", "Me", "Cf"):
        return 0
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1


def columns(text: str) -> int:
    """Columns ``text`` (one line) takes on a terminal, colour escapes left out."""
    return sum(char_columns(c) for c in _ESCAPE.sub("", text))


def terminal_width(stream: IO[str]) -> int | None:
    """The width of the terminal ``stream`` writes to (``COLUMNS`` first, as the shell sets it); ``None`` if none.

    A terminal reporting no size (0 columns, as a new pseudo-terminal) is not wrapped for: its width is unknown.
    """
    try:
        if not stream.isatty():
            return None
        fd = stream.fileno()
    except (AttributeError, ValueError, OSError):  # a closed or replaced stream
        return None
    told = os.environ.get("COLUMNS", "")
    if told.isdigit() and int(told) > 0:
        return int(told)
    try:
        return os.get_terminal_size(fd).columns or None
    except OSError:
        return None


def wrap(text: str, width: int | None) -> str:
    """``text`` with each prose line broken to at most ``width`` columns (``None``: unchanged); see the module."""
    if width is None or width < 2 or _is_json(text):
        return text
    out: list[str] = []
    in_code = False
    for line in text.split("\n"):
        if line.lstrip().startswith(FENCE):
            in_code = not in_code
            out.append(line)
        elif in_code or columns(line) <= width or _is_json(line):
            out.append(line)
        else:
            out.extend(_wrap_line(line, width))
    return "\n".join(out)


def _is_json(text: str) -> bool:
    stripped = text.strip()
    if not stripped or stripped[0] not in "{[":
        return False
    try:
        return isinstance(orjson.loads(stripped), dict | list)
    except orjson.JSONDecodeError:
        return False


def _words(body: str) -> list[str]:
    """``body`` cut where a line may break: runs of spaces, and words; a wide character is a word of its own."""
    pieces: list[str] = []
    for token in _TOKEN.findall(body):
        if token.isspace():
            pieces.append(token)
            continue
        last = pieces[-1] if pieces else ""
        if last and not last.isspace() and (token in _NO_LINE_START or not _breaks_between(last, token)):
            pieces[-1] = last + token
        else:
            pieces.append(token)
    return pieces


def _breaks_between(before: str, char: str) -> bool:
    """A break between ``before`` (a word so far) and ``char``: only beside a wide character."""
    last = _ESCAPE.sub("", before)[-1:] or " "
    return char_columns(char) == 2 or char_columns(last) == 2


def _wrap_line(line: str, width: int) -> list[str]:
    body = line.lstrip(" ")
    indent = line[: len(line) - len(body)]
    if columns(indent) * 2 >= width:  # an indent eating the line leaves no room to wrap into
        indent = ""
    lines: list[str] = []
    current, used, space = indent, columns(indent), ""
    fresh = True
    for piece in _words(body):
        if piece.isspace():
            space = piece if not fresh else ""
            continue
        size = columns(piece)
        if not fresh and used + columns(space) + size > width:
            lines.append(current)
            current, used, space = indent, columns(indent), ""
        current += space + piece
        used += columns(space) + size
        space, fresh = "", False
    lines.append(current)
    return lines


def echo(text: str, *, err: bool = False) -> None:
    """``click.echo`` of one of the chat's prose messages, wrapped to the width of the terminal it goes to."""
    stream = sys.stderr if err else sys.stdout
    click.echo(wrap(text, terminal_width(stream)), err=err)
