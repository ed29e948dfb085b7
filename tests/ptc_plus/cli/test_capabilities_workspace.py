"""``capabilities search``/``plan``/``set`` over the plan a new session in the workspace would get, and exit codes."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli_runner import CliRunner

MANAGED = 'version = 1\n\n[management]\nenabled = true\n\n[capabilities."host:convert_units"]\ndisclosure = "off"\n'


def workspace_with(tmp_path: Path, text: str) -> Path:
    root = tmp_path / "ws"
    config = root / ".ptc-plus" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(text, "utf-8")
    return root


def found(workspace: Path, query: str, run_cli: CliRunner, *extra: str) -> set[str]:
    done = run_cli("capabilities", "search", query, "--workspace", str(workspace), "--json", *extra)
    assert done.code == 0
    result = done.json()
    return {m["identity"] for m in [*result["expanded"], *result["not_expanded"]]}


def test_search_never_finds_an_off_capability(tmp_path: Path, run_cli: CliRunner) -> None:
    assert "host:convert_units" in found(tmp_path, "convert units", run_cli)  # no config: the host's provision
    workspace = workspace_with(tmp_path, MANAGED)
    assert "host:convert_units" not in found(workspace, "convert units", run_cli)
    done = run_cli("capabilities", "search", "convert units", "--workspace", str(workspace))
    assert done.code == 0
    assert "host:convert_units" not in done.out
    # On-demand members stay findable.
    assert "host:read_file" in found(workspace, "read a file", run_cli)


def test_plan_shows_a_loosening_the_workspace_may_not_make(tmp_path: Path, run_cli: CliRunner) -> None:
    workspace = workspace_with(tmp_path, 'version = 1\n[runtime]\npolicy = "danger-full-access"\n')
    done = run_cli("capabilities", "plan", "--workspace", str(workspace), "--json")
    assert done.code == 0
    (issue,) = done.json()["issues"]
    assert "runtime.policy" in issue and "may only tighten" in issue
    done = run_cli("capabilities", "plan", "--workspace", str(workspace))
    assert done.code == 0
    assert "may only tighten" in done.err


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["capabilities", "set", "host:read_file", "bogus"], "PTC-4021"),
        (["capabilities", "set", 'weird"id', "full"], "PTC-4022"),
        (["capabilities", "set", "host:read file", "off"], "PTC-4022"),
        (["capabilities", "search", "x", "--limit", "0"], "PTC-1001"),
        (["capabilities", "search", "x", "--budget", "0"], "PTC-1001"),
        (["capabilities", "search", "x", "--tools", "nofile.json"], "PTC-3001"),
        (["sdk", "--tools", "nofile.json"], "PTC-3001"),
        (["capabilities", "search", "x", "--limit", "many"], "PTC-1001"),
    ],
)
def test_usage_errors_exit_2_with_their_own_code(
    tmp_path: Path, run_cli: CliRunner, args: list[str], code: str
) -> None:
    done = run_cli(*([*args, "--workspace", str(tmp_path)] if args[0] == "capabilities" else args))
    assert done.code == 2
    usage, hint, error = done.err.splitlines()
    command = " ".join(["ptc-plus", *args[: 2 if args[0] == "capabilities" else 1]])
    assert usage.startswith(f"Usage: {command} [OPTIONS]")
    assert hint == f"Try '{command} --help' for help."
    assert error.startswith(f"ptc-plus: {code}") and done.out == ""
    assert not (tmp_path / ".ptc-plus").exists()  # nothing was written


def test_an_uneditable_config_is_a_failure_not_a_usage_error(tmp_path: Path, run_cli: CliRunner) -> None:
    workspace = workspace_with(tmp_path, "[management\n")
    done = run_cli("capabilities", "set", "host:read_file", "off", "--workspace", str(workspace))
    assert done.code == 1
    # The config's own error (PTC-4002, not valid TOML, with its line) or the editor's (PTC-4020): a failure either way.
    assert done.err.startswith(("ptc-plus: PTC-4002: ", "ptc-plus: PTC-4020: ")) and done.err.count("\n") == 1


def test_set_warns_about_an_identity_the_catalog_lacks(tmp_path: Path, run_cli: CliRunner) -> None:
    done = run_cli("capabilities", "set", "mcp:github/create_issue", "off", "--workspace", str(tmp_path))
    assert done.code == 0
    assert "now off" in done.out and "not in this workspace's current catalog" in done.err
    assert 'disclosure = "off"' in (tmp_path / ".ptc-plus" / "config.toml").read_text("utf-8")
    done = run_cli("capabilities", "set", "host:read_file", "off", "--workspace", str(tmp_path))
    assert done.code == 0
    assert done.err == ""


COMMENTED = """\
version = 1

[management]
enabled = true

# Never delete notes.
[capabilities."host:notes_delete"]
disclosure = "off"

# Search notes up front.
[capabilities."host:notes_search"]
disclosure = "full"
"""


def test_inherit_takes_the_tables_own_comment_and_keeps_the_next_ones(tmp_path: Path, run_cli: CliRunner) -> None:
    workspace = workspace_with(tmp_path, COMMENTED)
    assert run_cli("capabilities", "set", "host:notes_delete", "inherit", "--workspace", str(workspace)).code == 0
    text = (workspace / ".ptc-plus" / "config.toml").read_text("utf-8")
    assert text == COMMENTED.replace(
        '# Never delete notes.\n[capabilities."host:notes_delete"]\ndisclosure = "off"\n\n', ""
    )
    assert run_cli("capabilities", "set", "host:notes_search", "inherit", "--workspace", str(workspace)).code == 0
    text = (workspace / ".ptc-plus" / "config.toml").read_text("utf-8")
    assert "Search notes" not in text and "capabilities" not in text and "enabled = true" in text
