"""Message catalogs of this distribution (``locale/<lang>.json``).

Every user-facing message and error code of the host contract, the
reference host and the plugin is looked up here by key. Catalogs are flat
JSON objects ``{"key": "text with {placeholders}"}``; both locales must
hold the same keys (a meta-test enforces it).

The language comes from ``PTC_LOCALE``, else ``LC_ALL``/``LC_MESSAGES``/``LANG``
(``zh*`` selects Chinese), else English.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Any

import orjson

LOCALES = ("en", "zh")
_DEFAULT = "en"


def catalog_dir() -> Path:
    """Where the catalogs live: inside the installed wheel, else the source tree."""
    installed = Path(__file__).resolve().parent / "locale"
    if installed.is_dir():
        return installed
    return Path(__file__).resolve().parent.parent / "locale"


@functools.cache
def load_catalog(lang: str) -> dict[str, str]:
    """The catalog of ``lang`` (one of :data:`LOCALES`)."""
    if lang not in LOCALES:
        raise ValueError(f"unknown locale {lang!r}; known: {', '.join(LOCALES)}")
    data = orjson.loads((catalog_dir() / f"{lang}.json").read_bytes())
    if not isinstance(data, dict):
        raise ValueError(f"locale/{lang}.json must be a JSON object")
    return {str(k): str(v) for k, v in data.items()}


def current_locale() -> str:
    """The locale selected by the environment."""
    for var in ("PTC_LOCALE", "LC_ALL", "LC_MESSAGES", "LANG"):
        value = os.environ.get(var, "").strip().lower()
        if value:
            return "zh" if value.startswith("zh") else _DEFAULT
    return _DEFAULT


def message(key: str, lang: str | None = None, **params: Any) -> str:
    """The message ``key`` in ``lang`` (default: :func:`current_locale`), formatted with ``params``.

    A key missing from the catalog is a programming error: it raises ``KeyError``
    (the locale meta-test keeps that from shipping).
    """
    template = load_catalog(lang or current_locale())[key]
    return template.format(**params) if params else template
