"""The settings page's sessions over real HTTP (issue 34, ADR 0130): the workspace's sessions of the real
reference host, each with its frozen plan and pending diff, and a refresh button whose receipt is the one
``/capabilities refresh`` gives a person typing it into the same situation; refused for a live session, an
llm conversation, an unknown one, and without the form token or the page's origin."""

from __future__ import annotations

import asyncio
import html
import re
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest

from hookspecs import CommandReceipt, JSONObject, JSONValue, ToolContext, tool
from hookspecs.i18n import message as host_message
from hookspecs.reference import ReferenceHost
from hookspecs.reference.demo_tools import demo_tool_definitions
from ptc_plus.cli.settings_page import sessions as sessions_module
from ptc_plus.i18n import message
from tests.ptc_plus.cli.settings_server import form_of, get, post, running_server

T = TypeVar("T")
MANAGED = "version = 1\n[management]\nenabled = true\n"
WRITER_OFF = MANAGED + '\n[capabilities."host:write_file"]\ndisclosure = "off"\n'
PENDING = message("ptc.report.pending-diff", "en", sequence=1, summary="")[:-2]
"""The words ``/capabilities`` opens its pending-diff line with ("A refresh now would")."""


@pytest.fixture
def project(workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("LLM_USER_PATH", str(tmp_path / "llm"))  # never the developer's own llm conversations
    (workspace / ".ptc-plus").mkdir()
    (workspace / ".ptc-plus" / "config.toml").write_text(MANAGED, encoding="utf-8")
    yield workspace


def _run(work: Callable[[], Awaitable[T]]) -> T:
    async def main() -> T:
        return await work()

    return asyncio.run(main())


def _host(workspace: Path, state: Path | None = None) -> ReferenceHost:
    """The real reference host with PTC Plus (its entry point) and the demo tools, as ``ptc-plus demo`` runs it."""
    return ReferenceHost(workspace=workspace, state_dir=state, tools=demo_tool_definitions(workspace))


def start_sessions(workspace: Path, count: int, *, state: Path | None = None, ids: tuple[str, ...] = ()) -> list[str]:
    async def work() -> list[str]:
        async with _host(workspace, state) as host:
            started = []
            for index in range(count):
                given = ids[index] if ids else None
                started.append((await host.start_session(title="demo", session_id=given)).agent.session_id)
            return started

    return _run(work)


def slash(workspace: Path, session_id: str, line: str) -> CommandReceipt:
    """``line`` typed into the session ``session_id``, resumed in the reference host: the person's receipt."""

    async def work() -> CommandReceipt:
        async with _host(workspace) as host:
            session = await host.resume_session(session_id)
            return session.command(line)

    return _run(work)


def _block(page: str, session_id: str) -> str:
    text = html.unescape(page)
    start = text.index(f'<li class="session" id="session-{session_id}">')
    end = text.find('<li class="session"', start + 1)
    return text[start:] if end < 0 else text[start:end]


def _receipt(page: str) -> str:
    found = re.search(r'<pre id="receipt-text">(.*?)</pre>', page, re.S)
    assert found is not None, "no receipt on the page"
    return html.unescape(found.group(1))


def _refresh(server: object, page: str, session_id: str, headers: dict[str, str] | None = None) -> tuple[int, str]:
    from ptc_plus.cli.settings_page import SettingsServer

    assert isinstance(server, SettingsServer)
    form = {**form_of(page), "session": session_id}
    return post(server, f"/refresh?token={server.token}", form, headers)


def test_the_page_lists_each_session_with_its_frozen_plan_and_the_diff_slash_capabilities_shows(
    project: Path,
) -> None:
    first, second = start_sessions(project, 2)
    (project / ".ptc-plus" / "config.toml").write_text(WRITER_OFF, encoding="utf-8")
    shown = slash(project, first, "/capabilities").text  # what the person reads in the session itself
    pending = next(line for line in shown.splitlines() if line.startswith(PENDING))
    assert "host:write_file" in pending  # the situation has a diff to show
    with running_server(project) as server:
        status, page = get(server, f"/?token={server.token}")
    assert status == 200
    for session_id in (first, second):
        block = _block(page, session_id)
        assert pending in block  # the same line /capabilities prints
        assert message("cli.settings.page.session-ended", "en") in block
        assert "host:write_file [full]" in block  # the frozen plan, as frozen before the config changed
        assert message("cli.settings.page.refresh-button", "en") in block


def test_the_refresh_buttons_receipt_is_the_slash_commands_for_the_same_situation(project: Path) -> None:
    by_page, by_person = start_sessions(project, 2)  # two sessions in the same situation
    (project / ".ptc-plus" / "config.toml").write_text(WRITER_OFF, encoding="utf-8")
    log = project / ".agent-host" / "sessions" / f"{by_page}.jsonl"
    with running_server(project) as server:
        _, page = get(server, f"/?token={server.token}")
        status, after = _refresh(server, page, by_page)
        applied = _receipt(after)
        again_status, again = _refresh(server, after, by_page)
        repeated = _receipt(again)
    typed = slash(project, by_person, "/capabilities refresh")
    typed_again = slash(project, by_person, "/capabilities refresh")
    assert (status, again_status) == (200, 200)
    assert applied == typed.text
    assert typed.status.value == "applied" and "host:write_file" in applied
    assert repeated == typed_again.text  # a repeat is idempotent: "nothing to change", on both sides
    assert typed_again.status.value == "unchanged"
    heading = message("cli.settings.page.receipt", "en", session=by_page, status="applied")
    assert heading in html.unescape(after)
    # The page after the refresh: the session's plan is the refreshed one, nothing left pending.
    block = _block(again, by_page)
    assert message("ptc.report.pending-diff", "en", sequence=2, summary=message("ptc.refresh.none", "en")) in block
    assert "host:write_file [off]" in block
    assert log.read_text(encoding="utf-8").count('"ptc-capability-environment/v1"') == 2  # start, one refresh


def test_a_live_session_is_shown_live_and_its_refresh_refused_with_nothing_written(project: Path) -> None:
    (session_id,) = start_sessions(project, 1)
    (project / ".ptc-plus" / "config.toml").write_text(WRITER_OFF, encoding="utf-8")
    log = project / ".agent-host" / "sessions" / f"{session_id}.jsonl"

    async def while_open() -> tuple[str, int, str, bytes, bytes]:
        async with _host(project) as host:
            await host.resume_session(session_id)  # the owner: holds the log's lock while it is open
            before = log.read_bytes()
            with running_server(project) as server:
                _, page = await asyncio.to_thread(get, server, f"/?token={server.token}")
                status, refused = await asyncio.to_thread(_refresh, server, page, session_id)
            return page, status, refused, before, log.read_bytes()

    page, status, refused, before, after = _run(while_open)
    block = _block(page, session_id)
    assert message("cli.settings.page.session-live", "en") in block
    assert 'class="refresh"' not in block  # no button for it, the reason in its place
    assert status == 409
    assert _receipt(refused).startswith("PTC-6005: ")
    assert after == before  # the page wrote nothing into a session another process holds


def test_a_session_started_with_host_tools_the_page_lacks_is_refused_with_its_plan_kept(project: Path) -> None:
    @tool("lookup_order", description="Look up an order by its number.")
    async def lookup_order(arguments: JSONObject, context: ToolContext) -> JSONValue:
        return None

    async def with_own_tools() -> str:  # a host with one tool more, as ``ptc-plus chat --tools FILE`` starts one
        tools = (*demo_tool_definitions(project), lookup_order)
        async with ReferenceHost(workspace=project, tools=tools) as host:
            return (await host.start_session(title="demo")).agent.session_id

    session_id = _run(with_own_tools)
    log = project / ".agent-host" / "sessions" / f"{session_id}.jsonl"
    before = log.read_bytes()
    with running_server(project) as server:
        _, page = get(server, f"/?token={server.token}")
        status, refused = _refresh(server, page, session_id)
    assert status == 409
    assert _receipt(refused) == "PTC-6008: " + message(
        "error.PTC-6008", "en", session=session_id, tools="host:lookup_order"
    )
    assert log.read_bytes() == before  # refreshed with the page's tools, host:lookup_order would have gone


def test_a_session_taken_between_the_listing_and_the_refresh_is_refused_not_shared(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The listing says "not live" (as it would a moment before another refresh, a chat or a host took the
    # session); the refresh's own resume then meets the owner's lock and refuses, waiting for nothing.
    (session_id,) = start_sessions(project, 1)
    (project / ".ptc-plus" / "config.toml").write_text(WRITER_OFF, encoding="utf-8")
    log = project / ".agent-host" / "sessions" / f"{session_id}.jsonl"
    monkeypatch.setattr(sessions_module, "open_elsewhere", lambda path: False)

    async def while_open() -> tuple[int, str, bytes, bytes]:
        async with _host(project) as host:
            await host.resume_session(session_id)
            before = log.read_bytes()
            with running_server(project) as server:
                _, page = await asyncio.to_thread(get, server, f"/?token={server.token}")
                assert 'class="refresh"' in _block(page, session_id)
                status, refused = await asyncio.to_thread(_refresh, server, page, session_id)
            return status, refused, before, log.read_bytes()

    status, refused, before, after = _run(while_open)
    assert status == 409
    assert _receipt(refused) == "PTC-6005: " + message("error.PTC-6005", "en", session=session_id, log=str(log))
    assert after == before


def test_the_refresh_route_needs_the_form_token_the_url_token_and_the_pages_origin(project: Path) -> None:
    (session_id,) = start_sessions(project, 1)
    (project / ".ptc-plus" / "config.toml").write_text(WRITER_OFF, encoding="utf-8")
    log = project / ".agent-host" / "sessions" / f"{session_id}.jsonl"
    before = log.read_bytes()
    with running_server(project) as server:
        _, page = get(server, f"/?token={server.token}")
        form = {**form_of(page), "session": session_id}
        target = f"/refresh?token={server.token}"
        forged = post(server, target, {**form, "form_token": "guessed"})
        missing = post(server, target, {k: v for k, v in form.items() if k != "form_token"})
        no_origin = post(server, target, form, {"Origin": ""})
        foreign = post(server, target, form, {"Origin": "http://evil.example"})
        rebound = post(server, target, form, {"Host": "evil.example"})
        no_url_token = post(server, "/refresh", form)
        unchanged = log.read_bytes()
        done = post(server, target, form)
        replayed = post(server, target, form)
    assert forged == (403, "refused: form token\n")
    assert missing == (403, "refused: form token\n")
    assert no_origin == (403, "refused: origin\n")
    assert foreign == (403, "refused: origin\n")
    assert rebound == (403, "refused: host\n")
    assert no_url_token == (403, "refused: token\n")
    assert unchanged == before  # nothing refused wrote anything
    assert done[0] == 200 and _receipt(done[1]).startswith("Refresh #1 applied")
    assert replayed == (403, "refused: form token\n")  # a form token is spent by its first use


def test_an_unknown_session_and_an_llm_conversation_are_refused_with_their_codes(project: Path, tmp_path: Path) -> None:
    # An llm conversation's session as the llm plugin keeps it: under llm's directory, named llm-<id>.
    llm_sessions = tmp_path / "llm" / "ptc-plus"
    (conversation,) = start_sessions(project, 1, state=llm_sessions, ids=("llm-01abc",))
    with running_server(project) as server:
        _, page = get(server, f"/?token={server.token}")
        block = _block(page, conversation)
        unknown = _refresh(server, page, "s-nothere")
        _, page = get(server, f"/?token={server.token}")
        llm = _refresh(server, page, conversation)
        _, page = get(server, f"/?token={server.token}")
        sneaky = _refresh(server, page, "../../etc/passwd")
    assert message("cli.settings.page.kind-llm", "en") in block and 'class="refresh"' not in block
    assert unknown[0] == 404 and _receipt(unknown[1]).startswith("PTC-6006: ")
    assert llm[0] == 409
    assert _receipt(llm[1]) == "PTC-6007: " + message(
        "error.PTC-6007", "en", session=conversation, conversation="01abc"
    )
    assert sneaky[0] == 404


def test_an_llm_conversation_of_another_workspace_is_not_listed(project: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    start_sessions(elsewhere, 1, state=tmp_path / "llm" / "ptc-plus", ids=("llm-other",))
    with running_server(project) as server:
        _, page = get(server, f"/?token={server.token}")
    assert "llm-other" not in page
    assert message("cli.settings.page.no-sessions", "en") in html.unescape(page)


def test_llm_user_dir_is_where_llm_keeps_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import llm

    monkeypatch.setenv("LLM_USER_PATH", str(tmp_path / "llm-home"))
    assert sessions_module.llm_user_dir() == Path(llm.user_dir())  # type: ignore[no-untyped-call]


def test_a_session_from_before_the_plugin_and_a_damaged_log_are_listed_with_what_they_are(project: Path) -> None:
    async def without_the_plugin() -> list[str]:
        host = ReferenceHost(workspace=project, tools=demo_tool_definitions(project), load_entry_points=False)
        async with host:
            return [(await host.start_session(title="old")).agent.session_id for _ in range(2)]

    by_page, by_person = _run(without_the_plugin)
    damaged = project / ".agent-host" / "sessions" / "s-damaged.jsonl"
    damaged.write_text('{"v": 2, "seq": 0, "type": "session-started"\nnot json\n{"v": 2}\n', encoding="utf-8")
    with running_server(project) as server:
        status, page = get(server, f"/?token={server.token}")
        refreshed, after = _refresh(server, page, by_page)
    assert status == 200
    assert message("cli.settings.page.session-missing", "en") in _block(page, by_page)
    corrupt = host_message("error.HOST-0104", "en", path=str(damaged), seq=0)  # the host's own words for it
    assert message("cli.settings.page.session-unreadable", "en", detail=corrupt) in _block(page, "s-damaged")
    typed = slash(project, by_person, "/capabilities refresh")
    assert typed.status.value == "failed"  # no plan to refresh: the command's own answer
    assert refreshed == 200 and _receipt(after) == typed.text


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_each_refresh_buttons_accessible_name_holds_its_visible_label(lang: str) -> None:
    # A person using speech input says what they see; the name also tells a screen reader which session.
    label = message("cli.settings.page.refresh-label", lang, session="s-1")
    assert message("cli.settings.page.refresh-button", lang) in label and "s-1" in label


def test_two_tabs_refreshing_one_session_at_once_apply_it_once(project: Path) -> None:
    import concurrent.futures

    (session_id,) = start_sessions(project, 1)
    (project / ".ptc-plus" / "config.toml").write_text(WRITER_OFF, encoding="utf-8")
    log = project / ".agent-host" / "sessions" / f"{session_id}.jsonl"
    with running_server(project) as server:
        tabs = [get(server, f"/?token={server.token}")[1] for _ in range(2)]  # two renderings, two form tokens
        with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
            answers = list(pool.map(lambda page: _refresh(server, page, session_id), tabs))
    # Whichever came first applied it; the other waited for it (never refused, never half) and found nothing left.
    assert [status for status, _ in answers] == [200, 200]
    receipts = sorted(_receipt(page).split(":")[0] for _, page in answers)
    assert receipts == ["Refresh", "Refresh #1 applied"]
    assert any(_receipt(page) == message("ptc.refresh.unchanged", "en") for _, page in answers)
    assert log.read_text(encoding="utf-8").count('"ptc-capability-environment/v1"') == 2
