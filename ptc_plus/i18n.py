"""The plugin's message catalog (``locale/ptc_plus/<lang>.json``).

PTC Plus owns its messages: ``ptc.*``, ``runtime.*``, ``cli.*``, ``plan.*``,
``config.*``, ``gate.*``, ``demo.*`` and ``error.PTC-xxxx``. The host's
messages (``host.*``, ``error.HOST-xxxx`` ...) are the contract's, in
:mod:`hookspecs.i18n`; the plugin never looks them up. The locale is chosen
as the host's is (:func:`hookspecs.i18n.current_locale`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hookspecs.i18n import Catalog

CATALOG = Catalog(Path(__file__).resolve().parent)
"""The plugin's catalog (``locale/ptc_plus/`` in a source tree, ``ptc_plus/locale/`` installed)."""


def load_catalog(lang: str) -> dict[str, str]:
    """The plugin's catalog in ``lang`` (one of :data:`hookspecs.i18n.LOCALES`)."""
    return CATALOG.load(lang)


def message(key: str, lang: str | None = None, **params: Any) -> str:
    """The plugin's message ``key`` in ``lang`` (default: the environment's locale), formatted with ``params``.

    A key missing from the catalog is a programming error: it raises ``KeyError``
    (the locale meta-test keeps that from shipping).
    """
    return CATALOG.message(key, lang, **params)
