"""The top-level ``ptc-plus --help`` without importing click (issue 32, ADR 0123).

Importing click alone costs about 4x ``python -I -c pass``, so a bare ``--help`` (or ``-h``) is answered
from the same table the lazy group lists (:data:`ptc_plus.cli.COMMANDS` and each command's
``cli.<command>.help`` message), laid out the way click 8 lays out the root group's help: usage line,
help text, ``Options`` and ``Commands`` definition lists, epilog, at the width click would choose
(``min(terminal columns, 100) - 2``, at least 50). ``tests/ptc_plus/cli/test_fast_help.py`` compares this
text with click's own rendering in both locales at several widths, so the two cannot drift apart; a text
this layout does not cover (a line break, a tab, a control character in a message) returns ``None`` and
the caller lets click render it.
"""

from __future__ import annotations

import os
import sys
import textwrap

from ptc_plus.cli import COMMANDS
from ptc_plus.i18n import message

MAX_CONTENT_WIDTH = 100
"""The root group's ``max_content_width`` (:func:`ptc_plus.cli.lazy_group.root`)."""
USAGE_PIECES = "[OPTIONS] COMMAND [ARGS]..."
"""click's usage pieces of a group with options: ``options_metavar`` and ``subcommand_metavar``."""
_UNCOVERED = ("\n", "\r", "\t", "\b", "\f", "\x1b")
"""Characters click treats specially (paragraphs, no-rewrap blocks, tabs, ANSI): left to click itself."""


class _Wrapper(textwrap.TextWrapper):
    """click's ``TextWrapper`` for text without ANSI codes: a word longer than the line is cut at the
    line's end, never at a hyphen (the standard library's prefers a hyphen)."""

    def _handle_long_word(self, reversed_chunks: list[str], cur_line: list[str], cur_len: int, width: int) -> None:
        space_left = max(width - cur_len, 1)
        if self.break_long_words:
            last = reversed_chunks[-1]
            cur_line.append(last[:space_left])
            reversed_chunks[-1] = last[space_left:]
        elif not cur_line:
            cur_line.append(reversed_chunks.pop())


def top_level_help() -> str | None:
    """The root group's help as click prints it (without the final newline); ``None``: let click render it."""
    width = max(min(_terminal_columns(), MAX_CONTENT_WIDTH) - 2, 50)
    names = [module.replace("_", "-") for module in COMMANDS]
    texts = {
        "help": message("cli.help"),
        "epilog": message("cli.epilog"),
        "usage": message("cli.click.usage"),
        "options": message("cli.click.options"),
        "commands": message("cli.click.commands"),
        "version": message("cli.click.version-option"),
        "help-option": message("cli.click.help-option"),
        **{name: message(f"cli.{name}.help") for name in names},
    }
    if any(not text or text != text.strip() or any(c in text for c in _UNCOVERED) for text in texts.values()):
        return None
    prefix = f"{texts['usage']} ptc-plus "
    if width < len(prefix) + len(USAGE_PIECES):  # click would wrap the usage line
        return None
    out = [f"{prefix}{USAGE_PIECES}\n", "\n", _fill(texts["help"], width, "  ") + "\n"]
    options = [("--version", texts["version"]), ("-h, --help", texts["help-option"])]
    out += ["\n", f"{texts['options']}:\n", *_definitions(options, width)]
    limit = width - 6 - max(len(name) for name in names)
    commands = [(name, _short_help(texts[name], limit)) for name in names]
    out += ["\n", f"{texts['commands']}:\n", *_definitions(commands, width)]
    out += ["\n", _fill(texts["epilog"], width, "  ") + "\n"]
    return "".join(out).removesuffix("\n")


def _terminal_columns() -> int:
    """:func:`shutil.get_terminal_size`'s columns (``COLUMNS``, else the terminal, else 80), without shutil."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


def _fill(text: str, width: int, indent: str) -> str:
    return _Wrapper(width, initial_indent=indent, subsequent_indent=indent, replace_whitespace=False).fill(text)


def _short_help(text: str, limit: int) -> str:
    """click's default short help: the first sentence, shortened to ``limit`` with ``...``."""
    words = text.split()
    for i, word in enumerate(words):
        if word.endswith(".") and (i == len(words) - 1 or not words[i + 1][0].islower()):
            words = words[: i + 1]
            break
    short = " ".join(words)
    if len(short) <= limit:
        return short
    if limit < len("..."):
        return "..."
    return textwrap.shorten(short, limit, placeholder="...", break_on_hyphens=False).strip()


def _definitions(rows: list[tuple[str, str]], width: int) -> list[str]:
    """click's ``write_dl`` at indentation 2: terms padded to one column (at most 30), texts wrapped beside."""
    indent = 2
    first_col = min(max(len(term) for term, _ in rows), 30) + 2
    text_width = max(width - first_col - 2, 10)
    out: list[str] = []
    for term, text in rows:
        out.append(" " * indent + term)
        if not text:
            out.append("\n")
            continue
        if len(term) <= first_col - 2:
            out.append(" " * (first_col - len(term)))
        else:
            out.append("\n" + " " * (first_col + indent))
        lines = _Wrapper(text_width, replace_whitespace=False).fill(text).splitlines()
        out.append(f"{lines[0]}\n" if lines else "\n")
        out += [" " * (first_col + indent) + f"{line}\n" for line in lines[1:]]
    return out
