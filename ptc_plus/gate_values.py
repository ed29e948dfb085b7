"""Tolerant parsers for the raw gate values, shared by environment and config.

They sit below both the gate and the config (like :mod:`.sandbox_policy`): the gate parses with them, and the
config's tighten-only rules (:mod:`ptc_plus.config.tighten`, ADR 0086) compare a workspace file's gate values
with the user file's by what the gate will make of them.

Each parser takes the raw text (``None`` when unset) and returns the value
plus whether the text was invalid; callers turn "invalid" into a warning.
Unusable values always resolve to the *safe* side: mode off, rollout 0,
no debug filter, not sequential.
"""

from __future__ import annotations

import enum
import re

DEFAULT_SALT = "ptc-rollout"
"""The rollout hash's salt when none is configured."""

_PERCENT = re.compile(r"[0-9]+")


class GateMode(enum.StrEnum):
    OFF = "off"
    ON = "on"
    PARTIAL = "partial"


class DebugMode(enum.StrEnum):
    OPT_IN = "opt-in"
    OPT_OUT = "opt-out"


DEFAULT_MODE = GateMode.ON
"""Installing the plugin is opting in (ADR 0031; Refly defaults to off)."""


def parse_list(raw: str | None) -> frozenset[str] | None:
    """Comma-separated, items trimmed, empty items dropped; nothing left means unset (``None``)."""
    if raw is None:
        return None
    items = frozenset(item.strip() for item in raw.split(",")) - {""}
    return items or None


def parse_mode(raw: str | None) -> tuple[GateMode, bool]:
    """Trimmed, lower-cased; blank is unset (the default ``on``); anything else unknown is ``off``."""
    text = (raw or "").strip().lower()
    if not text:
        return DEFAULT_MODE, False
    try:
        return GateMode(text), False
    except ValueError:
        return GateMode.OFF, True


def parse_rollout_percent(raw: str | None) -> tuple[int, bool]:
    """A whole number 0..100; blank is unset (100); invalid or out of range counts as 0."""
    text = (raw or "").strip()
    if not text:
        return 100, False
    if _PERCENT.fullmatch(text) and int(text) <= 100:
        return int(text), False
    return 0, True


def parse_salt(raw: str | None) -> str:
    """Used verbatim; empty means the default salt."""
    return raw or DEFAULT_SALT


def parse_debug(raw: str | None) -> tuple[DebugMode | None, bool]:
    """Trimmed and lower-cased; blank is no filter; ``true`` is legacy ``opt-in``; invalid is no filter."""
    text = (raw or "").strip().lower()
    if not text:
        return None, False
    if text == "true":
        return DebugMode.OPT_IN, False
    try:
        return DebugMode(text), False
    except ValueError:
        return None, True


def parse_sequential(raw: str | None) -> tuple[bool, bool]:
    """``true`` runs nested calls one at a time; blank or ``false`` does not; anything else is false."""
    text = (raw or "").strip().lower()
    if text in {"", "false"}:
        return False, False
    if text == "true":
        return True, False
    return False, True


def debug_run(raw: str | None) -> bool:
    """Whether this is a debug run: the trimmed raw debug value is non-empty, valid or not."""
    return bool((raw or "").strip())
