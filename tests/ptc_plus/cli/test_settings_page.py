"""``ptc-plus settings``: the page over real HTTP on 127.0.0.1 (issue 34, ADR 0126).

Refusals (no token, a wrong one, a foreign ``Origin``, a rebound ``Host``) and what the page shows: each
configured key beside the file that set it, and the plan of ``ptc-plus capabilities plan`` with its reasons,
in English and in Chinese.
"""

from __future__ import annotations

import html
import subprocess
import sys
from pathlib import Path

import pytest

from ptc_plus.cli.workspace_plan import new_session_plan
from ptc_plus.i18n import message
from ptc_plus.plan import reason_text
from ptc_plus.session import plan_lines
from tests.cli_runner import CliRunner
from tests.ptc_plus.cli.settings_server import START_TIMEOUT_S, get, running_server

WORKSPACE_CONFIG = '[management]\nbudget_tokens = 1234\n\n[capabilities."host:write_file"]\ndisclosure = "off"\n'
USER_CONFIG = "[statistics]\nwindow = 40\n"


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "xdg"
    (home / "ptc-plus").mkdir(parents=True)
    (home / "ptc-plus" / "config.toml").write_text(USER_CONFIG, encoding="utf-8")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home))
    monkeypatch.delenv("PTC_LOCALE", raising=False)
    monkeypatch.setenv("LANG", "C.UTF-8")
    root = tmp_path / "project"
    (root / ".ptc-plus").mkdir(parents=True)
    (root / ".ptc-plus" / "config.toml").write_text(WORKSPACE_CONFIG, encoding="utf-8")
    return root


def test_a_request_without_the_token_is_refused(workspace: Path) -> None:
    with running_server(workspace) as server:
        status, body = get(server, "/")
    assert (status, body) == (403, "refused: token\n")


def test_a_wrong_token_is_refused(workspace: Path) -> None:
    with running_server(workspace) as server:
        status, body = get(server, f"/?token={server.token}x")
        twice, _ = get(server, f"/?token={server.token}&token={server.token}")
    assert (status, body) == (403, "refused: token\n")
    assert twice == 403


def test_a_foreign_origin_is_refused_even_with_the_token(workspace: Path) -> None:
    with running_server(workspace) as server:
        status, body = get(server, f"/?token={server.token}", {"Origin": "http://evil.example"})
        own, _ = get(server, f"/?token={server.token}", {"Origin": f"http://127.0.0.1:{server.port}"})
    assert (status, body) == (403, "refused: origin\n")
    assert own == 200


@pytest.mark.parametrize("host", ["evil.example:{port}", "127.0.0.1:1", "localhost", "0.0.0.0:{port}"])
def test_another_host_name_is_refused_against_dns_rebinding(workspace: Path, host: str) -> None:
    with running_server(workspace) as server:
        status, body = get(server, f"/?token={server.token}", {"Host": host.format(port=server.port)})
        local, _ = get(server, f"/?token={server.token}", {"Host": f"localhost:{server.port}"})
    assert (status, body) == (403, "refused: host\n")
    assert local == 200


def test_the_page_shows_each_key_beside_its_file_and_the_plan_with_reasons(workspace: Path) -> None:
    with running_server(workspace) as server:
        status, page = get(server, f"/?token={server.token}")
    assert status == 200
    text = html.unescape(page)
    workspace_file = str(workspace / ".ptc-plus" / "config.toml")
    user_file = str(Path(workspace.parent, "xdg", "ptc-plus", "config.toml"))
    row = _row(text, "management.budget_tokens")
    assert 'data-label="Workspace file"><code>1234</code>' in row and message("config.scope.workspace", "en") in row
    assert workspace_file in row
    row = _row(text, "statistics.window")
    assert 'data-label="User file"><code>40</code>' in row and user_file in row
    assert 'data-label="Workspace file"><span class="unset">' in row
    row = _row(text, 'capabilities."host:write_file".disclosure')
    assert '"off"' in row
    computed = new_session_plan(workspace)  # what `ptc-plus capabilities plan` computes
    plan = computed.plan
    assert plan.entries, "the workspace's demo tools give a plan"
    assert plan.budget_tokens == 1234
    for entry in plan.entries:
        assert f"<code>{entry.identity}</code>" in text
        assert reason_text(entry, "en") in text
    lines = plan_lines(plan, computed.counter.unit, "en")
    for line in lines[: len(lines) - len(plan.entries)]:  # the summary: budget used, overage, statistics state
        assert f"<li>{line}</li>" in text


def test_the_page_in_chinese(workspace: Path) -> None:
    with running_server(workspace) as server:
        status, page = get(server, f"/?token={server.token}&lang=zh")
    assert status == 200 and '<html lang="zh">' in page
    text = html.unescape(page)
    assert message("cli.settings.page.plan", "zh") in text
    entry = new_session_plan(workspace).plan.entries[0]
    assert reason_text(entry, "zh") in text
    assert message("cli.settings.page.plan", "en") not in text


def test_the_command_prints_its_address_and_stops_cleanly_on_ctrl_c(workspace: Path) -> None:
    import os
    import signal

    child = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys; from ptc_plus.cli import main; sys.exit(main())",
            "settings",
            "--workspace",
            str(workspace),
            "--no-open",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3])},
    )
    try:
        assert child.stdout is not None
        first = child.stdout.readline()  # printed after the socket listens
        assert first.startswith("Settings page: http://127.0.0.1:"), first
        url = first.split(": ", 1)[1].strip()
        port = int(url.split(":")[2].split("/")[0])
        import http.client

        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=START_TIMEOUT_S)
        connection.request("GET", url.split(str(port), 1)[1])
        assert connection.getresponse().status == 200
        connection.close()
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=START_TIMEOUT_S)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == 0, err
    assert "Settings page stopped." in out
    assert "Traceback" not in err


def _row(page: str, key: str) -> str:
    start = page.index(f"<code>{key}</code>")
    return page[start : page.index("</tr>", start)]


def test_check_builds_the_page_once_and_serves_nothing(workspace: Path, run_cli: CliRunner) -> None:
    done = run_cli("settings", "--workspace", str(workspace), "--check")
    plan = new_session_plan(workspace).plan
    assert done.code == 0, done.err
    assert done.out.strip() == message("cli.settings.checked", "en", plan=len(plan.entries), problems=0)
    assert "Settings page: http" not in done.out  # nothing listened


def test_check_reports_a_config_problem_with_its_code_and_exit_1(workspace: Path, run_cli: CliRunner) -> None:
    (workspace / ".ptc-plus" / "config.toml").write_bytes(b"version = 1\n# caf\xe9 latin-1\n")
    done = run_cli("settings", "--workspace", str(workspace), "--check")
    assert done.code == 1, done.out + done.err
    assert "PTC-4001" in done.err
