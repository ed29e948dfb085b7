"""Did you mean: the one close-match rule for every name a person types (issue 30 item 8).

Capability identities, MCP server names, config keys and enum values all suggest the nearest known
name the same way: :func:`closest`. An error carries it as its ``suggestion`` parameter, which
:meth:`ptc_plus.errors.PtcError.message` turns into the ``ptc.did-you-mean`` clause; warnings and config
issues add the same clause (:func:`did_you_mean`).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping

from ptc_plus.i18n import message

CUTOFF = 0.6
"""difflib's ratio a known name must reach to be suggested (its own default: "sesion" → "session",
"tmie" → "time", "host:writefile" → "host:write_file"; unrelated names stay unsuggested)."""


def closest(word: str, known: Iterable[str] | Mapping[str, str]) -> str | None:
    """The known name nearest ``word``, or ``None`` when none is close or ``word`` is itself known.

    Compared without regard to case. ``known`` may map each compared form to what to suggest (a tool's
    bare name → its identity, so ``write_file`` suggests ``host:write_file``); ties go to the first given.
    """
    forms = dict(known) if isinstance(known, Mapping) else {name: name for name in known}
    if word in forms.values():
        return None
    lowered: dict[str, str] = {}
    for form, suggestion in forms.items():
        lowered.setdefault(form.lower(), suggestion)
    if word.lower() in lowered:
        return lowered[word.lower()]
    found = difflib.get_close_matches(word.lower(), list(lowered), n=1, cutoff=CUTOFF)
    return lowered[found[0]] if found else None


def did_you_mean(suggestion: str | None, lang: str | None = None) -> str:
    """The localized clause for ``suggestion`` with a leading space, or ``""`` for none."""
    return " " + message("ptc.did-you-mean", lang, suggestion=suggestion) if suggestion else ""
