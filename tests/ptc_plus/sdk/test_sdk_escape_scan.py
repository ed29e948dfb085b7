"""The one-scan escapes of docstrings and comments match the per-character category rule exactly."""

from __future__ import annotations

import unicodedata

from ptc_plus.sdk.literals import clean_text, docstring_body, one_line

EVERY_CODE_POINT = "".join(map(chr, range(0x110000)))


def _per_character(text: str, *, tab: bool) -> str:
    """The former rule, as the oracle: escape Cc, Cs, Zl and Zp characters (and tabs too in comments)."""

    def escape(char: str) -> str:
        code = ord(char)
        if code < 0x100:
            return f"\\x{code:02x}"
        return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"

    def needs(char: str) -> bool:
        if char in "\n\t":
            return tab and char == "\t"
        return unicodedata.category(char) in {"Cc", "Cs", "Zl", "Zp"}

    return "".join(escape(c) if needs(c) else c for c in text)


def test_docstring_escapes_every_code_point_as_its_category_says() -> None:
    text = EVERY_CODE_POINT.replace('"', "").replace("\\", "")
    assert docstring_body(text) == _per_character(text, tab=False)


def test_comment_escapes_every_code_point_as_its_category_says() -> None:
    text = EVERY_CODE_POINT + "\tend"
    flat = " ".join(clean_text(text).split("\n"))
    assert one_line(text) == _per_character(flat, tab=True)
