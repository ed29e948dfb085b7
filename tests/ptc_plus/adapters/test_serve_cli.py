"""``ptc-plus mcp-serve`` as a command: ``--check``, its ``--json`` object, usage errors, and config problems."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import orjson
import pytest

from ptc_plus.i18n import message
from tests.cli_runner import CliRunner
from tests.scaffolding import isolate_from_the_machine

ROOT = Path(__file__).resolve().parents[3]
CLI = str(Path(sys.executable).with_name("ptc-plus"))


@pytest.fixture(autouse=True)
def isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    isolate_from_the_machine(monkeypatch, tmp_path)


def test_check_json_shows_what_a_client_is_offered(workspace: Path, run_cli: CliRunner) -> None:
    done = run_cli("mcp-serve", "--check", "--tools", "demo", "--workspace", str(workspace), "--json")
    assert done.code == 0, done.err
    document: dict[str, Any] = done.json()
    schema = orjson.loads((ROOT / "tests" / "data" / "cli" / "mcp-serve.schema.json").read_bytes())
    jsonschema.Draft202012Validator(schema).validate(document)
    assert [tool["name"] for tool in document["tools"]] == ["run_code", "read_spill", "search_capabilities"]
    assert document["prompts"] == ["capabilities", "capabilities_refresh"]
    assert "async def convert_units(" in document["instructions"]


def test_check_without_tools_serves_the_plugins_tools_only(workspace: Path, run_cli: CliRunner) -> None:
    done = run_cli("mcp-serve", "--check", "--workspace", str(workspace))
    assert done.code == 0, done.err
    assert message("cli.mcp-serve.check-tools", names="run_code, read_spill, search_capabilities") in done.out


def test_json_without_check_is_a_usage_error(workspace: Path, run_cli: CliRunner) -> None:
    done = run_cli("mcp-serve", "--json", "--workspace", str(workspace))
    assert done.code == 2
    assert done.json()["error"]["code"] == "PTC-1001"


def test_a_config_problem_is_reported_on_stderr_and_the_session_still_opens(
    workspace: Path, run_cli: CliRunner
) -> None:
    (workspace / ".ptc-plus").mkdir()
    (workspace / ".ptc-plus" / "config.toml").write_text("version = 1\n[management]\nenabled = 3\n", "utf-8")
    done = run_cli("mcp-serve", "--check", "--workspace", str(workspace))
    assert done.code == 0
    assert "PTC-4" in done.err and "management" in done.err
    assert "run_code" in done.out


def test_serving_ends_cleanly_when_the_client_closes_stdin(workspace: Path, tmp_path: Path) -> None:
    """The real executable: an empty stdin is a client that went away; no traceback, exit 0, nothing on stdout."""
    done = subprocess.run(
        [CLI, "mcp-serve", "--workspace", str(workspace)],
        input="",
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "XDG_CONFIG_HOME": str(tmp_path / "xdg"), "HOME": str(tmp_path)},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    assert "Traceback" not in done.stderr


def _broken_sources(workspace: Path, tmp_path: Path) -> None:
    """A user-file server whose command is missing and a workspace-file server nobody allowed here."""
    user = tmp_path / "xdg" / "ptc-plus" / "config.toml"
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text('[mcp.servers.gone]\ncommand = "no-such-mcp-server-here"\ntimeout_s = 60\n', "utf-8")
    (workspace / ".ptc-plus").mkdir()
    (workspace / ".ptc-plus" / "config.toml").write_text('[mcp.servers.repo]\ncommand = "mcp-server-git"\n', "utf-8")


def test_check_writes_every_source_problem_to_stderr(workspace: Path, tmp_path: Path, run_cli: CliRunner) -> None:
    _broken_sources(workspace, tmp_path)
    done = run_cli("mcp-serve", "--check", "--workspace", str(workspace))
    assert done.code == 0, done.err
    assert "ptc-plus mcp-serve: MCP server gone cannot start: the command 'no-such-mcp-server-here'" in done.err
    assert "ptc-plus mcp-serve: MCP server 'repo' comes from the workspace file" in done.err
    assert f"ptc-plus mcp trust repo --workspace {workspace.resolve()}" in done.err
    assert "run_code" in done.out


def test_serving_writes_every_source_problem_to_stderr(workspace: Path, tmp_path: Path) -> None:
    _broken_sources(workspace, tmp_path)
    done = subprocess.run(
        [CLI, "mcp-serve", "--workspace", str(workspace)],
        input="",
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "XDG_CONFIG_HOME": str(tmp_path / "xdg"), "HOME": str(tmp_path)},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    assert "MCP server gone cannot start" in done.stderr and "PATH searched: /usr/bin:/bin" in done.stderr
    assert "ptc-plus mcp trust repo" in done.stderr
