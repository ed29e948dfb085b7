"""Message catalogs, one per package that owns messages (``locale/<owner>/<lang>.json``).

Every user-facing message and error code is looked up by key in the catalog
of the package that owns it. The host contract and the reference host own
``host.*``, ``tool-error.*``, ``workspace-path.*`` and ``error.HOST-xxxx``:
:data:`HOST` below, read by :func:`message`. A plugin owns its messages and
loads them through a :class:`Catalog` of its own (PTC Plus:
:mod:`ptc_plus.i18n`), so neither package reads the other's keys. Catalogs
are flat JSON objects ``{"key": "text with {placeholders}"}``; both locales of
a catalog hold the same keys (a meta-test enforces it).

In a source tree a catalog lives in ``locale/<package>/``; the wheel carries
it inside the package as ``<package>/locale/`` (``force-include`` in
``pyproject.toml``).

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


@functools.cache
def _directory(package_dir: Path) -> Path:
    installed = package_dir / "locale"
    if installed.is_dir():
        return installed
    return package_dir.parent / "locale" / package_dir.name


@functools.cache
def _read(directory: Path, lang: str) -> dict[str, str]:
    if lang not in LOCALES:
        raise ValueError(f"unknown locale {lang!r}; known: {', '.join(LOCALES)}")
    data = orjson.loads((directory / f"{lang}.json").read_bytes())
    if not isinstance(data, dict):
        raise ValueError(f"{directory / lang}.json must be a JSON object")
    return {str(k): str(v) for k, v in data.items()}


class Catalog:
    """The message catalog of one package.

    :ivar package_dir: the owning package's directory; its name names the catalog
        (``locale/<name>/`` in a source tree, ``<package>/locale/`` when installed).

    A plain class, not attrs: this module is on the path of ``ptc-plus --help``, which must not pay
    attrs' import (ADR 0123).
    """

    __slots__ = ("package_dir",)

    def __init__(self, package_dir: Path) -> None:
        self.package_dir = package_dir

    def __repr__(self) -> str:
        return f"Catalog(package_dir={self.package_dir!r})"

    def directory(self) -> Path:
        """Where the catalog lives: inside the installed wheel, else the source tree."""
        return _directory(self.package_dir)

    def load(self, lang: str) -> dict[str, str]:
        """The catalog in ``lang`` (one of :data:`LOCALES`); read once, then cached."""
        return _read(self.directory(), lang)

    def message(self, key: str, lang: str | None = None, **params: Any) -> str:
        """The message ``key`` in ``lang`` (default: :func:`current_locale`), formatted with ``params``.

        A key missing from the catalog is a programming error: it raises ``KeyError``
        (the locale meta-test keeps that from shipping).
        """
        template = self.load(lang or current_locale())[key]
        return template.format(**params) if params else template


HOST = Catalog(Path(__file__).resolve().parent)
"""The host contract's catalog (``locale/hookspecs/``)."""


def catalog_dir() -> Path:
    """Where the host's catalog lives: inside the installed wheel, else the source tree."""
    return HOST.directory()


def load_catalog(lang: str) -> dict[str, str]:
    """The host's catalog in ``lang`` (one of :data:`LOCALES`)."""
    return HOST.load(lang)


def current_locale() -> str:
    """The locale selected by the environment."""
    for var in ("PTC_LOCALE", "LC_ALL", "LC_MESSAGES", "LANG"):
        value = os.environ.get(var, "").strip().lower()
        if value:
            return "zh" if value.startswith("zh") else _DEFAULT
    return _DEFAULT


def message(key: str, lang: str | None = None, **params: Any) -> str:
    """The host's message ``key`` in ``lang`` (default: :func:`current_locale`), formatted with ``params``."""
    return HOST.message(key, lang, **params)
