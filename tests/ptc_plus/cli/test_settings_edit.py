"""Saving values, baselines and capability choices of either file from the settings page (issue 34, ADR 0129).

Over real HTTP against the real server: each save lands in the file its form names, comments kept; each
bad input comes back at its field (422) with the reader's input kept, the config checker's words beside
it and the file untouched; an edit made since the page loaded (``ptc-plus capabilities set`` and
``ptc-plus config init`` in a child process, another tab) is never overwritten (409, their value shown);
every new write route refuses a forged or spent form token and a foreign or missing ``Origin``.
"""

from __future__ import annotations

import html
import re
import tomllib
from pathlib import Path

import pytest

from ptc_plus import discovery
from ptc_plus.cli.settings_page import SettingsServer
from ptc_plus.cli.settings_page.field_errors import field_id
from ptc_plus.cli.workspace_plan import workspace_catalog
from ptc_plus.config import ConfigIssue
from ptc_plus.i18n import message
from tests.ptc_plus.cli.settings_server import cli_child, get, post, post_form, running_server
from tests.ptc_plus.cli.test_settings_page import USER_CONFIG
from tests.ptc_plus.cli.test_settings_page import workspace as workspace


def _baseline(text: str) -> list[str]:
    listed: list[str] = tomllib.loads(text).get("management", {}).get("baseline", [])
    return listed


def _files(workspace: Path) -> tuple[str, str]:
    user = workspace.parent / "xdg" / "ptc-plus" / "config.toml"
    return (workspace / ".ptc-plus" / "config.toml").read_text(encoding="utf-8"), user.read_text(encoding="utf-8")


def _page(server: SettingsServer, query: str = "") -> str:
    status, body = get(server, f"/?token={server.token}&lang=en" + (f"&q={query}" if query else ""))
    assert status == 200
    return body


def _save(server: SettingsServer, page: str, route: str, changes: dict[str, str], **which: str) -> tuple[int, str]:
    form = post_form(page, route, **which)
    return post(server, form.action, {**form.fields, **changes})


def _note(page: str, field: str) -> str | None:
    found = re.search(rf'<p class="field-note" id="{re.escape(field)}-note" role="alert">(.*?)</p>', page, re.S)
    return None if found is None else html.unescape(re.sub(r"<[^>]+>", "", found.group(1)))


def _control(page: str, field: str) -> str:
    found = re.search(rf'<(?:input|select) id="{re.escape(field)}"[^>]*>', page)
    assert found is not None, field
    return found.group(0)


def _reason(path: str, reason: str, **params: str) -> str:
    return f"{path}: {ConfigIssue(file='', path=path, reason=reason, params=params).reason_text('en')}"


def test_a_value_is_saved_to_the_file_its_column_names_with_comments_kept(workspace: Path) -> None:
    user_file = workspace.parent / "xdg" / "ptc-plus" / "config.toml"
    user_file.write_text("# mine\n" + USER_CONFIG.replace("window = 40", "window = 40  # long"), encoding="utf-8")
    with running_server(workspace) as server:
        page = _page(server)
        assert _control(page, field_id("value", "user", "statistics.window")).endswith(
            'value="40" placeholder="not set">'
        )
        done = [
            _save(server, page, "value", {"value": "60"}, scope="user", key="statistics.window")[0],
            _save(server, _page(server), "value", {"value": "0.3"}, scope="workspace", key="statistics.threshold")[0],
            _save(server, _page(server), "value", {"value": "false"}, scope="user", key="statistics.enabled")[0],
            _save(server, _page(server), "value", {"value": ""}, scope="workspace", key="management.budget_tokens")[0],
            _save(server, _page(server), "value", {"value": "900"}, scope="user", key="context.preview_tokens")[0],
        ]
        after = _page(server)
    assert done == [303] * 5
    local, user = _files(workspace)
    assert user.startswith("# mine\n[statistics]\nwindow = 60  # long\n")  # the comments survive the edit
    assert "enabled = false" in user and "[context]\npreview_tokens = 900" in user
    assert "budget_tokens" not in local  # an empty field removes the key from that file
    assert "[statistics]\nthreshold = 0.3" in local
    # The value in force, with the file it came from, beside the forms.
    values = re.search(r'<table id="values">.*?</table>', after, re.S)
    assert values is not None
    row = re.search(r"<tr><th scope=\"row\"><code>statistics\.window</code>.*?</tr>", values.group(0), re.S)
    assert row is not None and "<code>60</code> (user file)" in row.group(0)


def test_the_baseline_of_either_file_is_added_to_moved_and_removed(workspace: Path) -> None:
    with running_server(workspace) as server:
        statuses = [
            _save(
                server, _page(server), "baseline", {"op": "add", "add": "host:read_file"}, scope="workspace", item=""
            )[0],
            _save(
                server, _page(server), "baseline", {"op": "add", "add": "host:list_files"}, scope="workspace", item=""
            )[0],
        ]
        assert _baseline(_files(workspace)[0]) == ["host:read_file", "host:list_files"]
        statuses.append(
            _save(server, _page(server), "baseline", {"op": "up"}, scope="workspace", item="host:list_files")[0]
        )
        assert _baseline(_files(workspace)[0]) == ["host:list_files", "host:read_file"]
        statuses.append(
            _save(server, _page(server), "baseline", {"op": "down"}, scope="workspace", item="host:list_files")[0]
        )
        assert _baseline(_files(workspace)[0]) == ["host:read_file", "host:list_files"]
        statuses.append(
            _save(server, _page(server), "baseline", {"op": "add", "add": "host:notes_add"}, scope="user", item="")[0]
        )
        statuses.append(
            _save(server, _page(server), "baseline", {"op": "remove"}, scope="workspace", item="host:read_file")[0]
        )
        page = _page(server)
    assert statuses == [303] * 6
    local, user = _files(workspace)
    assert _baseline(local) == ["host:list_files"]
    assert user.endswith('[management]\nbaseline = ["host:notes_add"]\n')
    first = re.search(r'<ol class="baseline" id="baseline-workspace">(.*?)</ol>', page, re.S)
    assert first is not None
    # The only entry can move neither way: no button that does nothing; Remove is a button, named for its entry.
    assert 'value="up"' not in first.group(1) and 'value="down"' not in first.group(1)
    assert (
        '<button type="submit" name="op" value="remove" aria-label="Remove host:list_files">Remove</button>'
        in first.group(1)
    )


def test_a_capability_choice_is_saved_in_either_file_and_inherit_removes_it(workspace: Path) -> None:
    with running_server(workspace) as server:
        page = _page(server)
        first = _save(server, page, "choice", {"value": "full"}, scope="user", identity="host:read_file")
        second = _save(
            server, _page(server), "choice", {"value": "inherit"}, scope="workspace", identity="host:write_file"
        )
        after = _page(server)
    assert (first[0], second[0]) == (303, 303)
    local, user = _files(workspace)
    assert 'capabilities."host:read_file"' in user and 'disclosure = "full"' in user
    assert "host:write_file" not in local  # inherit: the explicit choice is gone
    assert '<option value="full" selected>' in _control_block(after, field_id("choice", "user", "host:read_file"))


def _control_block(page: str, field: str) -> str:
    found = re.search(rf'<select id="{re.escape(field)}"[^>]*>.*?</select>', page, re.S)
    assert found is not None
    return found.group(0)


@pytest.mark.parametrize(
    ("key", "given", "expected"),
    [
        ("statistics.window", "abc", _reason("statistics.window", "type", expected="integer")),
        ("statistics.window", "-3", _reason("statistics.window", "minimum", low="1")),
        (
            "statistics.window",
            "3",
            _reason("statistics.min_samples", "min-samples-above-window", min_samples="5", window="3"),
        ),
        ("statistics.threshold", "1.5", _reason("statistics.threshold", "range", low="0", high="1")),
        ("statistics.threshold", "half", _reason("statistics.threshold", "type", expected="number")),
        ("management.budget_tokens", "-1", _reason("management.budget_tokens", "minimum", low="0")),
        ("statistics.enabled", "maybe", _reason("statistics.enabled", "type", expected="boolean")),
    ],
)
def test_a_bad_value_is_shown_at_its_field_with_the_checkers_words(
    workspace: Path, key: str, given: str, expected: str
) -> None:
    before = _files(workspace)
    with running_server(workspace) as server:
        status, page = _save(server, _page(server), "value", {"value": given}, scope="workspace", key=key)
    field = field_id("value", "workspace", key)
    assert status == 422
    assert _note(page, field) == f"{message('cli.settings.page.not-saved', 'en')} {expected}"
    control = _control(page, field)
    assert f'aria-describedby="{field}-note"' in control and 'aria-invalid="true"' in control
    assert control.endswith(" autofocus>")  # the refused page opens at the field
    if control.startswith("<input"):
        assert f'value="{html.escape(given, quote=True)}"' in control  # the reader's input, kept
    assert _files(workspace) == before


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("host:nope", None),  # not in the catalog: named with the nearest identity
        ("read file", message("error.PTC-4022", "en", identity="read file")),
        ("host:write_file", None),  # already listed: the checker's duplicate
    ],
)
def test_a_bad_identity_is_shown_at_the_add_field(workspace: Path, given: str, expected: str | None) -> None:
    with running_server(workspace) as server:
        listed = _save(
            server, _page(server), "baseline", {"op": "add", "add": "host:write_file"}, scope="user", item=""
        )
        before = _files(workspace)
        status, page = _save(server, _page(server), "baseline", {"op": "add", "add": given}, scope="user", item="")
    assert listed[0] == 303
    assert status == 422
    field = field_id("add", "user")
    note = _note(page, field)
    assert note is not None
    if given == "host:nope":
        assert message("cli.settings.page.unknown-identity", "en", identity=given) in note
        assert message("ptc.did-you-mean", "en", suggestion="host:notes_add") in note
    elif given == "host:write_file":
        assert _reason("management.baseline[1]", "duplicate", item="host:write_file") in note
    else:
        assert expected is not None and expected in note
    assert f'value="{html.escape(given, quote=True)}"' in _control(page, field)
    assert _files(workspace) == before


def test_a_choice_changed_from_the_cli_since_the_page_loaded_is_refused_and_kept(workspace: Path) -> None:
    with running_server(workspace) as server:
        page = _page(server)
        cli_child("capabilities", "set", "host:write_file", "on-demand", "--workspace", str(workspace))
        theirs = _files(workspace)
        status, refused = _save(
            server, page, "choice", {"value": "full"}, scope="workspace", identity="host:write_file"
        )
    assert status == 409
    field = field_id("choice", "workspace", "host:write_file")
    shown = message(
        "cli.settings.page.conflict-field",
        "en",
        file="workspace file",
        setting='capabilities."host:write_file".disclosure',
        theirs='"on-demand"',
    )
    assert _note(refused, field) == f"{message('cli.settings.page.not-saved', 'en')} {shown}"
    assert _files(workspace) == theirs  # the CLI's edit stands
    assert '<option value="full" selected>' in _control_block(refused, field)  # the reader's choice, kept
    again = post_form(refused, "choice", scope="workspace", identity="host:write_file")
    assert again.fields["expected"] == '"on-demand"'  # a second Save replaces their value knowingly


def test_a_value_changed_by_ptc_plus_config_since_the_page_loaded_is_refused(workspace: Path) -> None:
    with running_server(workspace) as server:
        page = _page(server)
        cli_child("config", "init", "--user", "--force", "--workspace", str(workspace))  # the starter sets no window
        theirs = _files(workspace)
        status, refused = _save(server, page, "value", {"value": "50"}, scope="user", key="statistics.window")
        other_tab, _ = _save(server, page, "value", {"value": "50"}, scope="user", key="statistics.window")
    assert status == 409
    field = field_id("value", "user", "statistics.window")
    note = _note(refused, field)
    assert note is not None and "statistics.window there is now not set" in note
    assert 'value="50"' in _control(refused, field)
    assert _files(workspace) == theirs
    assert other_tab == 403  # the refused page's form token was spent by the refusal


def test_another_tab_saving_first_wins_and_the_second_is_refused(workspace: Path) -> None:
    with running_server(workspace) as server:
        first_tab, second_tab = _page(server), _page(server)
        saved = _save(
            server, second_tab, "baseline", {"op": "add", "add": "host:read_file"}, scope="workspace", item=""
        )
        status, _ = _save(
            server, first_tab, "baseline", {"op": "add", "add": "host:list_files"}, scope="workspace", item=""
        )
    assert (saved[0], status) == (303, 409)
    assert _baseline(_files(workspace)[0]) == ["host:read_file"]


@pytest.mark.parametrize(
    ("route", "which", "changes"),
    [
        ("value", {"scope": "workspace", "key": "statistics.window"}, {"value": "7"}),
        ("baseline", {"scope": "user", "item": ""}, {"op": "add", "add": "host:read_file"}),
        ("choice", {"scope": "workspace", "identity": "host:read_file"}, {"value": "off"}),
    ],
)
def test_every_new_write_route_needs_the_form_token_and_the_pages_origin(
    workspace: Path, route: str, which: dict[str, str], changes: dict[str, str]
) -> None:
    before = _files(workspace)
    with running_server(workspace) as server:
        form = post_form(_page(server), route, **which)
        fields = {**form.fields, **changes}
        forged = post(server, form.action, {**fields, "form_token": "guessed"})
        missing = post(server, form.action, {k: v for k, v in fields.items() if k != "form_token"})
        no_origin = post(server, form.action, fields, {"Origin": ""})
        foreign = post(server, form.action, fields, {"Origin": "http://evil.example"})
        rebound = post(server, form.action, fields, {"Host": "evil.example"})
        no_url_token = post(server, f"/{route}", fields)
        unchanged = _files(workspace)
        spent = post(server, form.action, fields)
        replayed = post(server, form.action, fields)
    assert forged == (403, "refused: form token\n")
    assert missing == (403, "refused: form token\n")
    assert no_origin == (403, "refused: origin\n")
    assert foreign == (403, "refused: origin\n")
    assert rebound == (403, "refused: host\n")
    assert no_url_token == (403, "refused: token\n")
    assert unchanged == before
    assert spent[0] == 303
    assert replayed == (403, "refused: form token\n")


def test_a_form_the_page_never_sends_is_a_bad_request(workspace: Path) -> None:
    before = _files(workspace)
    with running_server(workspace) as server:
        unknown_key = _save(
            server, _page(server), "value", {"key": "runtime.timeout_s"}, scope="user", key="statistics.window"
        )
        bad_scope = _save(server, _page(server), "value", {"scope": "system"}, scope="user", key="statistics.window")
        bad_op = _save(server, _page(server), "baseline", {"op": "shuffle"}, scope="user", item="")
    assert unknown_key == bad_scope == bad_op == (400, "refused: value\n")
    assert _files(workspace) == before


def test_the_search_ranks_the_whole_catalog_as_discovery_does(workspace: Path) -> None:
    query = "write a file"
    snapshot = discovery.build_snapshot(workspace_catalog(workspace))
    ranked = [match["identity"] for match in discovery.find(snapshot, query, limit=25)["matches"]]
    with running_server(workspace) as server:
        page = _page(server, query.replace(" ", "+"))
        everything = _page(server)
    table = re.search(r'<table id="choice-table">.*?</table>', page, re.S)
    assert table is not None
    shown = re.findall(r'<th scope="row"><code>([^<]*)</code>', table.group(0))
    assert shown == ranked and "host:write_file" in shown  # off in this workspace, still found: it can come back
    assert f'<input id="q" type="search" name="q" value="{query}">' in page
    whole = re.search(r'<table id="choice-table">.*?</table>', everything, re.S)
    assert whole is not None
    listed = re.findall(r'<th scope="row"><code>([^<]*)</code>', whole.group(0))
    assert listed == [c.identity for c in workspace_catalog(workspace).managed()]


def test_each_choice_shows_the_file_it_came_from_and_a_stale_one_can_be_undone(workspace: Path) -> None:
    user_file = workspace.parent / "xdg" / "ptc-plus" / "config.toml"
    user_file.write_text(USER_CONFIG + '\n[capabilities."host:gone"]\ndisclosure = "full"\n', encoding="utf-8")
    with running_server(workspace) as server:
        page = _page(server)
        row = re.search(r'<tr><th scope="row"><code>host:write_file</code>.*?</tr>', page, re.S)
        stale = re.search(r'<tr><th scope="row"><code>host:gone</code>.*?</tr>', page, re.S)
        status, _ = _save(server, page, "choice", {"value": "inherit"}, scope="user", identity="host:gone")
    assert row is not None and "off" + '<span class="file">chosen in the workspace file</span>' in row.group(0)
    assert stale is not None and message("cli.settings.page.not-in-catalog", "en") in html.unescape(stale.group(0))
    assert status == 303
    assert "host:gone" not in user_file.read_text(encoding="utf-8")
