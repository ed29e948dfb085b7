"""``capabilities plan/search``, ``stats`` and ``mcp list`` plan from the servers' ``tools/list`` snapshots
(issue 29 item 1, ADR 0097).

A missing snapshot starts the server once and files one; with it, nothing starts and the plan's reasons name
the snapshot and its age; ``--refresh-sources`` starts the server and files a new one; a changed definition
never reads its predecessor's snapshot; a corrupt snapshot is a PTC-7023 warning (both locales) and the
server starts. The fixture server appends a line to a file at each start: starts are counted, not timed.
"""

from __future__ import annotations

import sys
from pathlib import Path

import orjson
import pytest

from ptc_plus.adapters.mcp import default_store
from tests.cli_runner import CliRunner

FIXTURE = Path(__file__).parents[1] / "adapters" / "mcp_fixture_server.py"
UNCONFINED = ["--policy", "danger-full-access"]


def _server(tmp_path: Path, starts: Path, *extra: str) -> None:
    user = tmp_path / "xdg" / "ptc-plus" / "config.toml"
    user.parent.mkdir(parents=True, exist_ok=True)
    args = ", ".join(f'"{a}"' for a in [str(FIXTURE), str(tmp_path), *extra])
    user.write_text(
        f'[mcp.servers.fixture]\ncommand = "{sys.executable}"\nargs = [{args}]\ntimeout_s = 60\n'
        f'env = {{ FIXTURE_STARTS = "{starts}" }}\n',
        "utf-8",
    )


def _starts(starts: Path) -> int:
    return len(starts.read_text("utf-8").splitlines()) if starts.exists() else 0


def _plan(run_cli: CliRunner, workspace: Path, *flags: str) -> dict[str, object]:
    done = run_cli("capabilities", "plan", "--workspace", str(workspace), "--json", *flags)
    assert done.code == 0, done.out + done.err
    document: dict[str, object] = done.json()
    return document


def test_the_first_plan_lists_the_server_and_later_commands_plan_from_its_snapshot(
    run_cli: CliRunner, workspace: Path, tmp_path: Path
) -> None:
    starts = tmp_path / "starts"
    _server(tmp_path, starts)
    first = _plan(run_cli, workspace)
    assert _starts(starts) == 1  # no snapshot yet: started once to list
    assert first["snapshots"] == {}
    assert len(list(default_store().directory.glob("*.json"))) == 1
    second = _plan(run_cli, workspace)
    assert _starts(starts) == 1  # planned from the snapshot: nothing started
    assert second["plan"] == first["plan"]
    assert list(second["snapshots"]) == ["fixture"]  # type: ignore[call-overload]
    reason = second["reasons"]["mcp:fixture/add"]  # type: ignore[index]
    assert "tools/list snapshot of" in reason and " old)" in reason
    human = run_cli("capabilities", "plan", "--workspace", str(workspace))
    assert "mcp:fixture: tools from its tools/list snapshot of" in human.err
    assert "tools/list snapshot of" in next(line for line in human.out.splitlines() if "mcp:fixture/add" in line)
    found = run_cli("capabilities", "search", "add two integers", "--workspace", str(workspace), "--json")
    assert found.code == 0 and "mcp:fixture/add" in found.out, found.out + found.err
    assert run_cli("stats", "--workspace", str(workspace)).code == 0
    listed = run_cli("mcp", "list", "--workspace", str(workspace), "--json")
    assert listed.code == 0, listed.err
    row = listed.json()["servers"][0]
    assert row["status"] == "configured" and row["snapshot"]["tools"] >= 2
    assert "listed" in run_cli("mcp", "list", "--workspace", str(workspace)).out
    assert _starts(starts) == 1  # search, stats and list started nothing either


def test_refresh_sources_starts_the_server_and_files_a_new_snapshot(
    run_cli: CliRunner, workspace: Path, tmp_path: Path
) -> None:
    starts = tmp_path / "starts"
    _server(tmp_path, starts)
    _plan(run_cli, workspace)
    (path,) = default_store().directory.glob("*.json")
    before = orjson.loads(path.read_bytes())
    refreshed = _plan(run_cli, workspace, "--refresh-sources")
    assert _starts(starts) == 2
    assert refreshed["snapshots"] == {}  # listed live: no snapshot was used
    after = orjson.loads(path.read_bytes())
    assert after["taken_at"] >= before["taken_at"] and after != before


def test_a_changed_definition_does_not_plan_from_the_old_snapshot(
    run_cli: CliRunner, workspace: Path, tmp_path: Path
) -> None:
    starts = tmp_path / "starts"
    _server(tmp_path, starts)
    _plan(run_cli, workspace)
    _server(tmp_path, starts, "Changed instructions: numbers are words.")
    changed = _plan(run_cli, workspace)
    assert _starts(starts) == 2  # another definition: its own listing
    assert changed["snapshots"] == {}
    assert len(list(default_store().directory.glob("*.json"))) == 2
    assert _plan(run_cli, workspace)["snapshots"] != {}
    assert _starts(starts) == 2


def test_a_corrupt_snapshot_is_a_warning_in_both_locales_and_the_server_starts(
    run_cli: CliRunner, workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    starts = tmp_path / "starts"
    _server(tmp_path, starts)
    _plan(run_cli, workspace)
    (path,) = default_store().directory.glob("*.json")
    path.write_bytes(b'{"version": 1, "digest": "torn')
    done = run_cli("capabilities", "plan", "--workspace", str(workspace))
    assert done.code == 0, done.err
    assert f"The saved tool list of MCP server fixture ({path}) cannot be read" in done.err, done.err
    assert _starts(starts) == 2  # fell back to starting it, which filed a good snapshot again
    assert default_store().load(path.stem, "fixture") is not None
    assert _plan(run_cli, workspace)["snapshots"] != {} and _starts(starts) == 2
    path.write_bytes(b'{"version": 99}')
    monkeypatch.setenv("PTC_LOCALE", "zh")
    done = run_cli("capabilities", "plan", "--workspace", str(workspace))
    assert done.code == 0, done.err
    assert f"无法读取 MCP 服务器 fixture 保存的工具列表（{path}）" in done.err, done.err
    assert "99" in done.err  # what was wrong with it
    assert _starts(starts) == 3


def test_exec_starts_the_server_at_the_first_call_and_an_off_server_not_at_all(
    run_cli: CliRunner, workspace: Path, tmp_path: Path
) -> None:
    starts = tmp_path / "starts"
    _server(tmp_path, starts)
    _plan(run_cli, workspace)  # lists it once: the snapshot
    assert _starts(starts) == 1
    program = "return (await tools.add(a=2, b=3))['total']\n"
    planned_only = run_cli("exec", "--workspace", str(workspace), *UNCONFINED, "--json", stdin="return 1\n")
    assert planned_only.code == 0, planned_only.out + planned_only.err
    assert _starts(starts) == 1  # a program that calls none of its tools starts nothing
    done = run_cli("exec", "--workspace", str(workspace), *UNCONFINED, "--json", stdin=program)
    assert done.code == 0 and done.json()["value"] == 5, done.out + done.err
    assert _starts(starts) == 2  # the first call started it
    assert run_cli("capabilities", "set", "mcp:fixture", "off", "--workspace", str(workspace)).code == 0
    off = run_cli("exec", "--workspace", str(workspace), *UNCONFINED, stdin=program)
    assert off.code == 1, off.out + off.err
    assert "MCP server fixture is off in this plan (mcp:fixture = off)" in off.err
    assert "add is off in this plan (mcp:fixture = off)" in off.err
    assert "ptc-plus capabilities set mcp:fixture inherit" in off.err
    assert _starts(starts) == 2  # never started while off
