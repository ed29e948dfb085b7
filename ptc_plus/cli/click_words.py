"""Click's own words (``Usage:``, ``Options``, ``No such option`` ...) in the CLI's locale.

click looks its words up with :func:`gettext.gettext` bound at import time in
each of its modules. There is no per-application catalog to hand it, so while
``ptc-plus`` runs in Chinese, :func:`localized_click` points those module-level
names at the plugin's catalog (the ``cli.click.*`` keys: the English value is
click's message id, the Chinese value its translation) and restores them
afterwards. English runs change nothing.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
from collections.abc import Iterator
from types import ModuleType

from hookspecs.i18n import current_locale
from ptc_plus.i18n import load_catalog

# The click modules that bind ``_`` / ``ngettext`` from gettext at import time.
_MODULES = (
    "click.core",
    "click.decorators",
    "click.exceptions",
    "click.formatting",
    "click.parser",
    "click.types",
    "click.termui",
    "click.utils",
    "click.shell_completion",
)


@functools.cache
def _translations(lang: str) -> dict[str, str]:
    english, translated = load_catalog("en"), load_catalog(lang)
    return {english[key]: translated[key] for key in english if key.startswith("cli.click.") and key in translated}


@contextlib.contextmanager
def localized_click() -> Iterator[None]:
    """Within the block, click's words come in the current locale (a no-op in English)."""
    lang = current_locale()
    if lang == "en":
        yield
        return
    table = _translations(lang)

    def gettext(text: str) -> str:
        return table.get(text, text)

    def ngettext(singular: str, plural: str, n: int) -> str:
        return gettext(singular if n == 1 else plural)

    saved: list[tuple[ModuleType, str, object]] = []
    for name in _MODULES:
        module = importlib.import_module(name)
        for attribute, replacement in (("_", gettext), ("ngettext", ngettext)):
            if hasattr(module, attribute):
                saved.append((module, attribute, getattr(module, attribute)))
                setattr(module, attribute, replacement)
    try:
        yield
    finally:
        for module, attribute, original in reversed(saved):
            setattr(module, attribute, original)
