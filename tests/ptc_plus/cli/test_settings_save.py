"""Saving the management switch from the settings page (issue 34, ADR 0126): through the workspace file's
editor (comments kept), with a per-page form token, and never over an edit made since the page loaded."""

from __future__ import annotations

import html
from pathlib import Path

import pytest

from ptc_plus.i18n import message
from tests.ptc_plus.cli.settings_server import form_of, get, post, running_server

COMMENTED = "# why the budget is small: a tiny model\n[management]\nbudget_tokens = 1234  # keep\n"


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("PTC_LOCALE", "en")
    root = tmp_path / "project"
    (root / ".ptc-plus").mkdir(parents=True)
    (root / ".ptc-plus" / "config.toml").write_text(COMMENTED, encoding="utf-8")
    return root


def _file(workspace: Path) -> str:
    return (workspace / ".ptc-plus" / "config.toml").read_text(encoding="utf-8")


def test_a_save_sets_the_switch_in_the_workspace_file_and_keeps_its_comments(workspace: Path) -> None:
    with running_server(workspace) as server:
        _, page = get(server, f"/?token={server.token}")
        form = form_of(page)
        assert form["expected"] == ""  # the file does not set the switch
        status, _ = post(server, f"/switch?token={server.token}", {**form, "enabled": "false"})
        _, after = get(server, f"/?token={server.token}")
    assert status == 303
    text = _file(workspace)
    assert "enabled = false" in text
    assert text.startswith(COMMENTED.rstrip("\n"))  # the comments and the key's own comment survive
    assert 'data-label="Workspace file"><code>false</code>' in after


def test_a_save_that_would_lose_an_edit_made_since_the_page_loaded_is_refused(workspace: Path) -> None:
    with running_server(workspace) as server:
        _, first_tab = get(server, f"/?token={server.token}")
        _, second_tab = get(server, f"/?token={server.token}")
        saved, _ = post(server, f"/switch?token={server.token}", {**form_of(second_tab), "enabled": "false"})
        status, page = post(server, f"/switch?token={server.token}", {**form_of(first_tab), "enabled": "true"})
    assert saved == 303
    assert status == 409
    theirs = message("cli.settings.page.conflict", "en", setting="management.enabled", theirs="false")
    assert theirs in html.unescape(page)  # the other side's value, shown
    assert "enabled = false" in _file(workspace)  # and kept
    assert form_of(page)["expected"] == "false"  # the refused page offers a fresh save from the value now


def test_a_save_made_after_the_file_was_edited_by_hand_is_refused(workspace: Path) -> None:
    with running_server(workspace) as server:
        _, page = get(server, f"/?token={server.token}")
        (workspace / ".ptc-plus" / "config.toml").write_text(COMMENTED + "enabled = true\n", encoding="utf-8")
        status, _ = post(server, f"/switch?token={server.token}", {**form_of(page), "enabled": "false"})
    assert status == 409
    assert _file(workspace).endswith("enabled = true\n")


def test_a_save_needs_an_unspent_form_token_from_a_page_and_the_pages_origin(workspace: Path) -> None:
    before = _file(workspace)
    with running_server(workspace) as server:
        _, page = get(server, f"/?token={server.token}")
        form = {**form_of(page), "enabled": "false"}
        target = f"/switch?token={server.token}"
        forged = post(server, target, {**form, "form_token": "guessed"})
        missing = post(server, target, {key: value for key, value in form.items() if key != "form_token"})
        no_origin = post(server, target, form, {"Origin": ""})
        foreign = post(server, target, form, {"Origin": "http://evil.example"})
        no_url_token = post(server, "/switch", form)
        unchanged = _file(workspace)
        spent = post(server, target, form)
        replayed = post(server, target, {**form, "expected": "false", "enabled": "true"})
    assert forged == (403, "refused: form token\n")
    assert missing == (403, "refused: form token\n")
    assert no_origin == (403, "refused: origin\n")
    assert foreign == (403, "refused: origin\n")
    assert no_url_token == (403, "refused: token\n")
    assert unchanged == before
    assert spent[0] == 303
    assert replayed == (403, "refused: form token\n")  # one page, one save
