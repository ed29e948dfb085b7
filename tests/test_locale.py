"""Locale meta-tests: each package owns its catalog; both locales of each agree; every error code has a message.

The host contract's catalog (``locale/hookspecs/``) holds the host's keys, the
plugin's (``locale/ptc_plus/``) the plugin's; each is loaded by its owner, from
the source tree here and from inside the package in an installed wheel.
"""

from __future__ import annotations

import importlib.util
import re
import string
from pathlib import Path
from types import ModuleType

import pytest

from hookspecs import i18n as host_i18n
from hookspecs.i18n import LOCALES, Catalog, load_catalog, message
from ptc_plus import i18n as plugin_i18n
from tests.installed_wheel import unpack_wheel

ROOT = Path(__file__).resolve().parent.parent
CATALOGS: dict[str, Catalog] = {"hookspecs": host_i18n.HOST, "ptc_plus": plugin_i18n.CATALOG}
OWNED_PREFIXES = {
    "hookspecs": ("host.", "tool-error.", "workspace-path.", "error.HOST-"),
    "ptc_plus": ("ptc.", "runtime.", "cli.", "plan.", "config.", "gate.", "demo.", "error.PTC-"),
}
CODE = re.compile(r"""["'](PTC-\d{4}|PTC-R\d{3}|HOST-\d{4})["']""")
OWNER_OF_CODE = {"PTC": "ptc_plus", "HOST": "hookspecs"}


def _placeholders(text: str) -> set[str]:
    return {field for _, field, _, _ in string.Formatter().parse(text) if field}


def test_each_package_reads_its_own_catalog_from_the_source_tree() -> None:
    assert {owner: catalog.directory() for owner, catalog in CATALOGS.items()} == {
        owner: ROOT / "locale" / owner for owner in CATALOGS
    }
    assert sorted(p.name for p in (ROOT / "locale").glob("*.json")) == []  # no unowned catalog left over


@pytest.mark.parametrize("owner", CATALOGS)
def test_both_locales_have_the_same_keys(owner: str) -> None:
    en, zh = CATALOGS[owner].load("en"), CATALOGS[owner].load("zh")
    assert sorted(set(en) ^ set(zh)) == []


@pytest.mark.parametrize("owner", CATALOGS)
def test_translations_use_the_same_placeholders(owner: str) -> None:
    en, zh = CATALOGS[owner].load("en"), CATALOGS[owner].load("zh")
    mismatched = [k for k in en if _placeholders(en[k]) != _placeholders(zh.get(k, ""))]
    assert mismatched == []


@pytest.mark.parametrize("owner", CATALOGS)
def test_no_message_is_empty(owner: str) -> None:
    for lang in LOCALES:
        assert [k for k, v in CATALOGS[owner].load(lang).items() if not v.strip()] == []


@pytest.mark.parametrize("owner", CATALOGS)
def test_each_catalog_holds_only_its_owners_keys(owner: str) -> None:
    for lang in LOCALES:
        assert sorted(k for k in CATALOGS[owner].load(lang) if not k.startswith(OWNED_PREFIXES[owner])) == []


def _locale_add() -> ModuleType:
    spec = importlib.util.spec_from_file_location("locale_add", ROOT / "scripts" / "locale_add.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_locale_add_script_files_every_key_with_its_owner() -> None:
    owner_of = _locale_add().owner
    assert {key: owner_of(key) for owner, catalog in CATALOGS.items() for key in catalog.load("en")} == {
        key: owner for owner, catalog in CATALOGS.items() for key in catalog.load("en")
    }


def _codes_in_source() -> set[str]:
    codes: set[str] = set()
    for package in ("ptc_plus", "hookspecs"):
        for path in (ROOT / package).rglob("*.py"):
            codes.update(CODE.findall(path.read_text(encoding="utf-8")))
    return codes


def test_source_raises_codes() -> None:
    codes = _codes_in_source()
    assert len(codes) > 10
    assert {code.split("-")[0] for code in codes} == set(OWNER_OF_CODE)


@pytest.mark.parametrize("lang", LOCALES)
def test_every_error_code_in_the_source_has_a_message_in_its_owners_catalog(lang: str) -> None:
    missing = [
        code
        for code in _codes_in_source()
        if f"error.{code}" not in CATALOGS[OWNER_OF_CODE[code.split("-")[0]]].load(lang)
    ]
    assert sorted(missing) == []


def test_locale_is_chosen_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PTC_LOCALE", "zh_CN.UTF-8")
    assert message("error.HOST-0103", path="x") == load_catalog("zh")["error.HOST-0103"].format(path="x")
    assert plugin_i18n.message("error.PTC-2103") == plugin_i18n.load_catalog("zh")["error.PTC-2103"]
    monkeypatch.setenv("PTC_LOCALE", "en")
    assert message("error.HOST-0103", path="x") == "No session log at x."
    assert plugin_i18n.message("error.PTC-2103") == "The run was aborted"


def test_neither_owner_reads_the_others_keys() -> None:
    with pytest.raises(KeyError):
        message("error.PTC-2103", "en")
    with pytest.raises(KeyError):
        plugin_i18n.message("error.HOST-0103", "en", path="x")


_PROBE = """
import json, sys
from hookspecs import i18n as host
from ptc_plus import i18n as plugin
print(json.dumps({
    "directories": [str(host.HOST.directory()), str(plugin.CATALOG.directory())],
    "catalogs": {lang: [host.load_catalog(lang), plugin.load_catalog(lang)] for lang in host.LOCALES},
}))
"""


def test_an_installed_wheel_finds_both_catalogs_inside_its_packages(tmp_path: Path) -> None:
    # The wheel's force-include (pyproject.toml) moves locale/<package>/ into <package>/locale/.
    wheel = unpack_wheel(tmp_path)
    site = wheel.site
    found = wheel.probe(_PROBE)
    assert found["directories"] == [str(site / "hookspecs" / "locale"), str(site / "ptc_plus" / "locale")]
    assert found["catalogs"] == {
        lang: [CATALOGS["hookspecs"].load(lang), CATALOGS["ptc_plus"].load(lang)] for lang in LOCALES
    }
