"""What the CLI prints: one JSON encoder for every ``--json`` document, and terminal styling.

Every ``--json`` output is one object with a ``"version"`` (:data:`JSON_VERSION`)
on standard output, written by :func:`emit_json`; an error under ``--json`` is
``{"version": 1, "error": {"code": "PTC-xxxx", "message": "..."}}``
(:func:`emit_error`). Tables appear only on a terminal (:func:`on_terminal`;
a pipe or file gets one plain record per line, for grep and scripts), and
colour only on a terminal without ``NO_COLOR`` (https://no-color.org) or
``TERM=dumb`` (:func:`styled`).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from typing import Any

import click

from ptc_plus.errors import PtcError

JSON_VERSION = 1
"""Version of every ``--json`` document; bumped when a document's documented keys change incompatibly."""


def wants_json(args: Sequence[str]) -> bool:
    """Whether the command line asks for JSON (before any ``--``), so even a parse error is answered in JSON."""
    for arg in args:
        if arg == "--":
            return False
        if arg == "--json":
            return True
    return False


def emit_json(document: Mapping[str, Any]) -> None:
    """Print ``document`` (which must carry ``version``) as indented, key-sorted JSON on standard output."""
    if "version" not in document:
        raise ValueError("every --json document carries a version")
    from hookspecs.serialization import canonical_bytes  # cattrs: only a --json answer pays its import

    sys.stdout.write(canonical_bytes(document, indent=True).decode() + "\n")


def emit_error(error: PtcError) -> None:
    """The ``--json`` form of a failed command."""
    emit_json({"version": JSON_VERSION, "error": {"code": error.code, "message": error.message()}})


def on_terminal() -> bool:
    """Whether standard output is a terminal: tables there, one plain record per line in a pipe or file."""
    try:
        return sys.stdout.isatty() and os.environ.get("TERM") != "dumb"
    except ValueError:  # a closed stream is no terminal
        return False


def styled(stream_is_tty: bool | None = None) -> bool:
    """Whether to colour output on standard output (or on a stream whose TTY-ness is given)."""
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    return sys.stdout.isatty() if stream_is_tty is None else stream_is_tty


def paint(text: str, **style: Any) -> str:
    """``text`` with click ``style`` attributes (``fg``, ``bold`` ...) when :func:`styled`, else unchanged."""
    return click.style(text, **style) if styled() else text


def table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """Rows in aligned columns under a (bold on a terminal) header line; the last column is not padded."""
    cells = [list(headers), *[list(row) for row in rows]]
    widths = [max(len(click.unstyle(row[i])) for row in cells) for i in range(len(headers))]

    def line(row: Sequence[str]) -> str:
        padded = [cell + " " * (widths[i] - len(click.unstyle(cell))) for i, cell in enumerate(row[:-1])]
        return "  ".join([*padded, row[-1]]).rstrip()

    head = line(cells[0])
    return "\n".join([paint(head, bold=True), *(line(row) for row in cells[1:])])


def plural(count: int, one: str, other: str) -> str:
    """``one`` or ``other`` by ``count``: pick between a message's ``.one`` and ``.other`` keys (in Chinese both
    keys hold the same text, so the choice is harmless there)."""
    return one if count == 1 else other
