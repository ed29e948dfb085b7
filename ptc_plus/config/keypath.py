"""Dotted TOML key paths as users write them: ``capabilities."mcp:git/log".disclosure``."""

from __future__ import annotations

import re

import orjson

_BARE = re.compile(r"[A-Za-z0-9_-]+")


def toml_key(name: str) -> str:
    """``name`` as a TOML key: bare when it can be, else a quoted basic string."""
    if _BARE.fullmatch(name):
        return name
    return orjson.dumps(name).decode()


def join(*parts: str) -> str:
    """Join raw key names into one dotted path, quoting where TOML needs it."""
    return ".".join(toml_key(part) for part in parts)
