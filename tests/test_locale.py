"""Locale meta-tests: both catalogs agree, and every error code has a message in both."""

from __future__ import annotations

import re
import string
from pathlib import Path

import pytest

from hookspecs.i18n import LOCALES, load_catalog, message

ROOT = Path(__file__).resolve().parent.parent
CODE = re.compile(r"""["'](PTC-\d{4}|HOST-\d{4})["']""")


def _placeholders(text: str) -> set[str]:
    return {field for _, field, _, _ in string.Formatter().parse(text) if field}


def test_both_locales_have_the_same_keys() -> None:
    en, zh = load_catalog("en"), load_catalog("zh")
    assert sorted(set(en) ^ set(zh)) == []


def test_translations_use_the_same_placeholders() -> None:
    en, zh = load_catalog("en"), load_catalog("zh")
    mismatched = [k for k in en if _placeholders(en[k]) != _placeholders(zh.get(k, ""))]
    assert mismatched == []


def test_no_message_is_empty() -> None:
    for lang in LOCALES:
        assert [k for k, v in load_catalog(lang).items() if not v.strip()] == []


def _codes_in_source() -> set[str]:
    codes: set[str] = set()
    for package in ("ptc_plus", "hookspecs"):
        for path in (ROOT / package).rglob("*.py"):
            codes.update(CODE.findall(path.read_text(encoding="utf-8")))
    return codes


def test_source_raises_codes() -> None:
    assert len(_codes_in_source()) > 10


@pytest.mark.parametrize("lang", LOCALES)
def test_every_error_code_in_the_source_has_a_message(lang: str) -> None:
    catalog = load_catalog(lang)
    assert sorted(c for c in _codes_in_source() if f"error.{c}" not in catalog) == []


def test_locale_is_chosen_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PTC_LOCALE", "zh_CN.UTF-8")
    assert message("error.HOST-0103", path="x") == load_catalog("zh")["error.HOST-0103"].format(path="x")
    monkeypatch.setenv("PTC_LOCALE", "en")
    assert message("error.HOST-0103", path="x") == "No session log at x."
