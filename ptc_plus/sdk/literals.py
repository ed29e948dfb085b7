"""Putting untrusted text into Python source safely: docstrings, comments, literals.

Descriptions come from tool authors and may hold anything (quotes, backslashes,
NUL, lone surrogates, ``\\r``). Everything here returns text that keeps the
generated module parseable and shows the original readably.
"""

from __future__ import annotations

import json
import re
import textwrap
import unicodedata
from typing import Any

_QUOTE_RUN = re.compile(r'"(?="|$)')
_ESCAPED = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")
"""Exactly the characters :func:`_needs_escape` accepts (categories Cc, Cs, Zl and Zp are closed sets), as one
scan: asking :mod:`unicodedata` per character was about a tenth of rendering a large SDK (ADR 0076)."""
_ESCAPED_OR_TAB = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")


def _escape_char(char: str) -> str:
    if char in "\n\t":
        return char
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def _needs_escape(char: str) -> bool:
    return char not in "\n\t" and unicodedata.category(char) in {"Cc", "Cs", "Zl", "Zp"}


def clean_text(text: str) -> str:
    """Normalize line endings, dedent (the first line apart, as docstrings are), trim blank edges."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").expandtabs(4)
    first, _, rest = text.lstrip("\n").partition("\n")
    lines = [line.rstrip() for line in [first.strip(), *textwrap.dedent(rest).split("\n")]]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines)


def docstring_body(text: str) -> str:
    """``text`` made safe to sit between triple double quotes (no enclosing quotes)."""
    text = text.replace("\\", "\\\\")
    text = _ESCAPED.sub(lambda found: _escape_char(found.group()), text)
    # A quote followed by a quote (or ending the text) could close the string early.
    return _QUOTE_RUN.sub('\\\\"', text)


def docstring(text: str, indent: str) -> str:
    """A complete, indented docstring statement for ``text`` (already cleaned)."""
    body = docstring_body(text)
    lines = body.split("\n")
    if len(lines) == 1:
        return f'{indent}"""{body}"""'
    inner = "\n".join(f"{indent}{line}" if line else "" for line in lines[1:])
    return f'{indent}"""{lines[0]}\n{inner}\n{indent}"""'


def one_line(text: str) -> str:
    """``text`` safe for a ``#`` comment: one line, control characters escaped."""
    flat = " ".join(clean_text(text).split("\n"))
    return _ESCAPED_OR_TAB.sub(lambda found: _escape_char(found.group()), flat)


def json_text(value: Any) -> str:
    """Canonical JSON of ``value`` (keys sorted), used to show defaults and examples."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, allow_nan=True, default=repr)


def literal_value(value: Any) -> str | None:
    """The Python source of ``value`` inside ``Literal[...]``, or ``None`` if not allowed there."""
    if value is None or isinstance(value, bool):
        return repr(value)
    if isinstance(value, int | str):
        return repr(value)
    return None
