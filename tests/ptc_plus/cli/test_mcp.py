"""``ptc-plus mcp add|list|remove|trust`` and ``capabilities set mcp:<server>`` (ADR 0071)."""

from __future__ import annotations

import os
import sys
import tomllib
from pathlib import Path

import pytest

from tests.cli_runner import CliRunner
from tests.scaffolding import clean_environment, run_installed


def user_file(tmp_path: Path) -> Path:
    return tmp_path / "xdg" / "ptc-plus" / "config.toml"


def workspace_file(workspace: Path) -> Path:
    return workspace / ".ptc-plus" / "config.toml"


def repository_adds(workspace: Path, text: str) -> None:
    """What a cloned repository brings: its own workspace file, written without any ``ptc-plus`` command."""
    path = workspace_file(workspace)
    path.parent.mkdir(exist_ok=True)
    with path.open("a", encoding="utf-8") as handle:
        handle.write(text)


def statuses(run_cli: CliRunner, workspace: Path) -> dict[str, str]:
    done = run_cli("mcp", "list", "--workspace", str(workspace), "--json")
    assert done.code == 0, done.err
    return {server["name"]: server["status"] for server in done.json()["servers"]}


def test_add_writes_the_workspace_file_and_the_users_consent(
    run_cli: CliRunner, workspace: Path, tmp_path: Path
) -> None:
    argv = ["mcp", "add", "time", "--env", "TZ=UTC", "--timeout", "5", "--workspace", str(workspace)]
    done = run_cli(*argv, "--", "mcp-server-time", "--local-timezone", "UTC")
    assert done.code == 0, done.err
    assert "added MCP server time: TZ=UTC mcp-server-time --local-timezone UTC" in done.out
    written = tomllib.loads(workspace_file(workspace).read_text("utf-8"))
    assert written["mcp"]["servers"]["time"] == {
        "command": "mcp-server-time",
        "args": ["--local-timezone", "UTC"],
        "env": {"TZ": "UTC"},
        "timeout_s": 5,
    }
    consent = tomllib.loads(user_file(tmp_path).read_text("utf-8"))["mcp"]["consent"]
    assert list(consent) == [os.path.realpath(workspace)]
    assert statuses(run_cli, workspace) == {"time": "configured"}

    again = run_cli(*argv, "--", "mcp-server-time", "--local-timezone", "UTC")
    assert again.code == 0 and "nothing changed" in again.out
    other = run_cli("mcp", "add", "time", "--workspace", str(workspace), "--", "other")
    assert other.code == 1 and "PTC-4303" in other.err


def test_add_keeps_the_comments_of_the_file_it_edits(run_cli: CliRunner, workspace: Path) -> None:
    repository_adds(workspace, "# our team settings\nversion = 1\n\n[runtime]\n# slow CI\ntimeout_s = 60\n")
    assert run_cli("mcp", "add", "git", "--workspace", str(workspace), "--", "mcp-server-git").code == 0
    text = workspace_file(workspace).read_text("utf-8")
    assert text.startswith("# our team settings\nversion = 1\n\n[runtime]\n# slow CI\ntimeout_s = 60\n\n")
    assert text.endswith('[mcp.servers.git]\ncommand = "mcp-server-git"\n')


def test_a_server_a_repository_brings_waits_for_trust_and_for_trust_again_after_a_change(
    run_cli: CliRunner, workspace: Path
) -> None:
    repository_adds(workspace, '[mcp.servers.git]\ncommand = "mcp-server-git"\nargs = ["--repository", "."]\n')
    listed = run_cli("mcp", "list", "--workspace", str(workspace))
    assert listed.code == 0
    assert "git\tworkspace\tnot-trusted\tmcp-server-git --repository ." in listed.out
    assert f"ptc-plus mcp trust git --workspace {os.path.realpath(workspace)}" in listed.out

    trusted = run_cli("mcp", "trust", "git", "--workspace", str(workspace))
    assert trusted.code == 0, trusted.err
    assert "git runs: mcp-server-git --repository ." in trusted.out
    assert statuses(run_cli, workspace) == {"git": "configured"}
    assert "nothing changed" in run_cli("mcp", "trust", "git", "--workspace", str(workspace)).out

    path = workspace_file(workspace)
    path.write_text(path.read_text("utf-8").replace('"."', '"/"'), "utf-8")
    assert statuses(run_cli, workspace) == {"git": "changed"}


def test_trust_of_a_user_server_records_nothing(run_cli: CliRunner, workspace: Path, tmp_path: Path) -> None:
    assert run_cli("mcp", "add", "time", "--user", "--workspace", str(workspace), "--", "mcp-server-time").code == 0
    before = user_file(tmp_path).read_text("utf-8")
    done = run_cli("mcp", "trust", "time", "--workspace", str(workspace))
    assert done.code == 0 and "needs no consent" in done.out
    assert user_file(tmp_path).read_text("utf-8") == before
    assert not workspace_file(workspace).exists()


def test_remove_takes_the_table_and_its_comment_and_says_when_the_other_file_still_has_it(
    run_cli: CliRunner, workspace: Path
) -> None:
    repository_adds(workspace, 'version = 1\n\n# the time server\n[mcp.servers.time]\ncommand = "t"\n\n[runtime]\n')
    assert run_cli("mcp", "add", "time", "--user", "--workspace", str(workspace), "--", "t").code == 0
    done = run_cli("mcp", "remove", "time", "--workspace", str(workspace))
    assert done.code == 0 and "still defined in the other config file" in done.err
    assert workspace_file(workspace).read_text("utf-8") == "version = 1\n\n[runtime]\n"
    assert statuses(run_cli, workspace) == {"time": "configured"}  # the user's own definition
    assert run_cli("mcp", "remove", "time", "--user", "--workspace", str(workspace)).code == 0
    assert statuses(run_cli, workspace) == {}
    missing = run_cli("mcp", "remove", "time", "--workspace", str(workspace))
    assert missing.code == 1 and "PTC-4302" in missing.err


def test_the_server_unit_is_accepted_by_capabilities_set_and_switches_the_server(
    run_cli: CliRunner, workspace: Path
) -> None:
    assert run_cli("mcp", "add", "time", "--workspace", str(workspace), "--", "mcp-server-time").code == 0
    done = run_cli("capabilities", "set", "mcp:time", "off", "--workspace", str(workspace), "--json")
    assert done.code == 0 and done.json()["in_catalog"] is True
    unknown = run_cli("capabilities", "set", "mcp:nowhere", "off", "--workspace", str(workspace))
    assert unknown.code == 0 and "no MCP server 'nowhere' is configured" in unknown.err
    choices = tomllib.loads(workspace_file(workspace).read_text("utf-8"))["capabilities"]
    assert choices == {"mcp:time": {"disclosure": "off"}, "mcp:nowhere": {"disclosure": "off"}}


@pytest.mark.parametrize(("lang", "word"), [("en", "added MCP server"), ("zh", "已添加 MCP 服务器")])
def test_messages_follow_the_locale(
    run_cli: CliRunner, workspace: Path, monkeypatch: pytest.MonkeyPatch, lang: str, word: str
) -> None:
    monkeypatch.setenv("PTC_LOCALE", lang)
    done = run_cli("mcp", "add", "time", "--workspace", str(workspace), "--", "mcp-server-time")
    assert done.code == 0 and word in done.out


def test_the_installed_command_passes_everything_after_the_double_dash_to_the_server(
    workspace: Path, tmp_path: Path
) -> None:
    argv = ["mcp", "add", "git", "--json", "--workspace", str(workspace), "--", "srv", "--json", "--user", "-x"]
    done = run_installed(argv, clean_environment(tmp_path), cwd=tmp_path)
    assert done.code == 0, done.err
    server = tomllib.loads(workspace_file(workspace).read_text("utf-8"))["mcp"]["servers"]["git"]
    assert server == {"command": "srv", "args": ["--json", "--user", "-x"]}


def test_capabilities_plan_and_search_see_the_tools_of_a_trusted_server_and_name_a_refused_one(
    run_cli: CliRunner, workspace: Path
) -> None:
    time_server = str(Path(sys.executable).with_name("mcp-server-time"))
    repository_adds(workspace, f'[mcp.servers.time]\ncommand = "{time_server}"\nargs = ["--local-timezone", "UTC"]\n')
    refused = run_cli("capabilities", "plan", "--workspace", str(workspace), "--json")
    assert refused.code == 0, refused.err
    assert any("mcp trust time" in note for note in refused.json()["sources"])
    assert not any(e["identity"].startswith("mcp:time/") for e in refused.json()["plan"]["entries"])

    assert run_cli("mcp", "trust", "time", "--workspace", str(workspace)).code == 0
    planned = run_cli("capabilities", "plan", "--workspace", str(workspace), "--json")
    assert planned.code == 0, planned.err
    identities = {e["identity"] for e in planned.json()["plan"]["entries"]}
    assert {"mcp:time/get_current_time", "mcp:time/convert_time"} <= identities
    assert planned.json()["sources"] == []
    found = run_cli("capabilities", "search", "what time is it in Tokyo", "--workspace", str(workspace), "--json")
    assert found.code == 0, found.err
    assert "mcp:time/" in found.out


BOOM = "import sys\nprint('boom', file=sys.stderr)\nsys.exit(3)\n"


def test_list_says_configured_until_check_starts_each_allowed_server_and_reports_usable_or_why(
    run_cli: CliRunner, workspace: Path, tmp_path: Path
) -> None:
    fixture = Path(__file__).parents[1] / "adapters" / "mcp_fixture_server.py"
    boom = tmp_path / "boom.py"
    boom.write_text(BOOM, encoding="utf-8")
    user = user_file(tmp_path)
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text(
        f'[mcp.servers.good]\ncommand = "{sys.executable}"\nargs = ["{fixture}"]\ntimeout_s = 60\n'
        f'[mcp.servers.boom]\ncommand = "{sys.executable}"\nargs = ["{boom}"]\ntimeout_s = 60\n'
        '[mcp.servers.missing]\ncommand = "no-such-mcp-server-here"\ntimeout_s = 60\n',
        encoding="utf-8",
    )
    assert statuses(run_cli, workspace) == {"good": "configured", "boom": "configured", "missing": "configured"}
    done = run_cli("mcp", "list", "--check", "--workspace", str(workspace), "--json")
    assert done.code == 0, done.err
    rows = {row["name"]: row for row in done.json()["servers"]}
    assert {name: row["status"] for name, row in rows.items()} == {
        "good": "usable",
        "boom": "unavailable",
        "missing": "unavailable",
    }
    assert rows["good"]["code"] is None and rows["good"]["reason"] is None
    assert rows["boom"]["code"] == "PTC-7021" and "exited with code 3" in rows["boom"]["reason"]
    assert "boom" in rows["boom"]["reason"].split("stderr:")[1]
    assert rows["missing"]["code"] == "PTC-7020" and "absolute path" in rows["missing"]["reason"]
    for name in ("good", "boom", "missing"):
        assert f"starting MCP server {name} (waiting up to 60.0s" in done.err
    human = run_cli("mcp", "list", "--check", "--workspace", str(workspace))
    assert "boom\tuser\tunavailable\t" in human.out and "good\tuser\tusable\t" in human.out
    assert "missing: MCP server missing cannot start" in human.out


def test_a_plan_waiting_for_a_silent_server_says_so_then_names_the_handshake_timeout(
    run_cli: CliRunner, workspace: Path, tmp_path: Path
) -> None:
    silent = tmp_path / "silent.py"
    silent.write_text("import sys, time\nsys.stdin.read()\ntime.sleep(3600)\n", encoding="utf-8")
    user = user_file(tmp_path)
    user.parent.mkdir(parents=True, exist_ok=True)
    # The verdict does not depend on speed: this server never answers, whatever the timeout.
    user.write_text(f'[mcp.servers.silent]\ncommand = "{sys.executable}"\nargs = ["{silent}"]\nstart_timeout_s = 1\n')
    done = run_cli("capabilities", "plan", "--workspace", str(workspace), "--json")
    assert done.code == 0, done.err
    assert "starting MCP server silent (waiting up to 1.0s for its handshake)" in done.err
    assert any("did not complete the MCP handshake within 1.0s" in line for line in done.json()["sources"])
