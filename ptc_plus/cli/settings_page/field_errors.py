"""Why a save was not made, shown beside the field it came from (ADR 0129).

A refused save re-renders the page with a :class:`FieldNote`: the field's id, what the user typed (kept in
the field, so nothing is lost), the message (the config checker's own words, or the other side's value
of a concurrent edit) and the HTTP status of the answer. The note is tied to its input by
``aria-describedby`` and marks it ``aria-invalid``, and it begins with words ("Not saved:"), never only a
colour, so a screen reader and a reader without colour both learn it.
"""

from __future__ import annotations

import re
from html import escape

import attrs

from ptc_plus.i18n import message


@attrs.frozen(kw_only=True)
class FieldNote:
    """A refused save: the field ``field`` shows ``given`` again, with ``text`` beside it."""

    field: str
    given: str
    text: str
    status: int
    """422: the value was refused; 409: another edit came first; 400: a request the page never makes."""


_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def field_id(*parts: str) -> str:
    """An HTML id from ``parts`` (a scope, a key or an identity): letters, digits, ``_`` and ``-`` only, each
    other character written as ``_<hex>_``, so two different identities never share an id."""
    return "-".join(_UNSAFE.sub(lambda found: f"_{ord(found.group()):x}_", part) for part in parts)


def note_for(note: FieldNote | None, field: str) -> FieldNote | None:
    """``note`` when it belongs to ``field``."""
    return note if note is not None and note.field == field else None


def described(note: FieldNote | None, field: str) -> str:
    """The attributes tying ``field``'s control to its note (none without one); the control gets the focus,
    so the refused page opens where the reader was, far down the page as that may be."""
    if note_for(note, field) is None:
        return ""
    return f' aria-invalid="true" aria-describedby="{field}-note" autofocus'


def note_html(note: FieldNote | None, field: str, lang: str) -> str:
    """The note beside ``field`` (nothing when the refused save was another field's)."""
    mine = note_for(note, field)
    if mine is None:
        return ""
    lead = escape(message("cli.settings.page.not-saved", lang))
    return f'<p class="field-note" id="{field}-note" role="alert"><strong>{lead}</strong> {escape(mine.text)}</p>'
