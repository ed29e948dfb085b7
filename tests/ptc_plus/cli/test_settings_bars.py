"""The plan's bars on the settings page over real HTTP (issue 34, ADR 0130): coverage and samples per
capability from real statistics stores (the number written beside each bar), "no sample" where nothing
was sampled, the budget used and an overage in words, and why statistics decide nothing when they do not,
in the words ``ptc-plus capabilities plan`` prints."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

from ptc_plus.cli.workspace_plan import new_session_plan
from ptc_plus.i18n import message
from ptc_plus.statistics import workspace_store
from tests.ptc_plus.cli.settings_server import get, running_server
from tests.statistics_samples import record_families

CONVERTER, READER, SEARCH = "host:convert_units", "host:read_file", "host:search_files"
STATISTICS = "version = 1\n[management]\nenabled = true\n[statistics]\nwindow = 4\nmin_samples = 3\n"


@pytest.fixture
def project(workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("LLM_USER_PATH", str(tmp_path / "llm"))
    (workspace / ".ptc-plus").mkdir()
    return workspace


def _configure(workspace: Path, text: str) -> None:
    (workspace / ".ptc-plus" / "config.toml").write_text(text, encoding="utf-8")


def _page(workspace: Path, lang: str = "en") -> str:
    with running_server(workspace) as server:
        status, page = get(server, f"/?token={server.token}&lang={lang}")
    assert status == 200
    return html.unescape(page)


def _row(page: str, identity: str) -> str:
    start = page.index(f'<th scope="row"><code>{identity}</code></th>')
    return page[start : page.index("</tr>", start)]


def test_coverage_and_samples_bars_carry_their_numbers_in_words(project: Path) -> None:
    _configure(project, STATISTICS)
    # Four families with the converter and the reader available, the converter used in three; search never there.
    record_families(workspace_store(project), project, ["f1"], [], available=[CONVERTER, READER])
    record_families(workspace_store(project), project, ["f2", "f3", "f4"], [CONVERTER], available=[CONVERTER, READER])
    entries = {entry.identity: entry for entry in new_session_plan(project).plan.entries}
    assert (entries[CONVERTER].coverage, entries[CONVERTER].samples, entries[CONVERTER].window) == (0.75, 4, 4)
    page = _page(project)
    row = _row(page, CONVERTER)
    coverage = message("cli.settings.page.coverage-value", "en", coverage="75%", scope="workspace")
    assert f'<meter min="0" max="1" value="0.75" aria-hidden="true"></meter><span class="bar-text">{coverage}' in row
    samples = message("cli.settings.page.samples-value", "en", samples=4, window=4)
    assert f'<meter min="0" max="4" value="4" aria-hidden="true"></meter><span class="bar-text">{samples}' in row
    reader = _row(page, READER)
    assert message("cli.settings.page.coverage-value", "en", coverage="0%", scope="workspace") in reader  # 0 of 4
    search = _row(page, SEARCH)
    assert search.count(message("cli.settings.page.no-sample", "en")) == 2  # no denominator: no bar at 0 %
    assert "<meter" not in search
    assert 'id="statistics-note"' not in page  # they vote: nothing to explain


def test_the_budget_bar_and_an_overage_said_in_words(project: Path) -> None:
    _configure(
        project,
        'version = 1\n[management]\nenabled = true\nbudget_tokens = 50\n[capabilities."host:write_file"]\n'
        'disclosure = "full"\n[capabilities."host:read_file"]\ndisclosure = "full"\n',
    )
    computed = new_session_plan(project)
    plan = computed.plan
    assert plan.overage_tokens > 0  # two explicit full contracts do not fit 50 tokens
    page = _page(project)
    unit = computed.counter.unit
    percent = f"{plan.used_tokens / 50:.0%}"
    used = message("cli.settings.page.budget-used", "en", used=plan.used_tokens, budget=50, unit=unit, percent=percent)
    assert (
        '<div id="budget"><span class="bar"><meter min="0" max="50" value="50" aria-hidden="true"></meter>'
        f'<span class="bar-text">{used}</span>'
    ) in page
    line = message("ptc.report.budget", "en", used=plan.used_tokens, budget=50, unit=unit, overage=plan.overage_tokens)
    assert f"<li>{line}</li>" in page  # the /capabilities budget line, in the summary above the bar
    over = message("cli.settings.page.overage", "en", overage=plan.overage_tokens, unit=computed.counter.unit)
    assert f'<p class="over" role="note">{over}</p>' in page


@pytest.mark.parametrize(
    ("config", "state"),
    [
        (STATISTICS, "unavailable"),  # no store yet
        (STATISTICS.replace("[statistics]\n", "[statistics]\nenabled = false\n"), "disabled"),
        (STATISTICS.replace("window = 4", "window = -3"), "invalid"),  # a config problem
    ],
)
def test_why_statistics_decide_nothing_in_the_words_of_capabilities_plan(
    project: Path, config: str, state: str
) -> None:
    _configure(project, config)
    assert new_session_plan(project).plan.statistics == state
    page = _page(project)
    note = re.search(r'<div id="statistics-note" class="note" role="note">(.*?)</div>', page, re.S)
    assert note is not None
    assert message(f"plan.statistics.{state}", "en") in note.group(1)
    zh = _page(project, "zh")
    assert message(f"plan.statistics.{state}", "zh") in zh


def test_paths_under_the_home_directory_are_shown_from_tilde(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _configure(project, STATISTICS)
    monkeypatch.setenv("HOME", str(tmp_path))
    page = _page(project)
    assert message("cli.settings.page.workspace", "en", workspace="~/workspace") in page
    assert "~/workspace/.ptc-plus/config.toml" in page
    assert str(tmp_path) not in page  # no temporary (or user's) absolute path left on the page
