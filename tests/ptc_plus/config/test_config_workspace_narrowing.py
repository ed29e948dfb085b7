"""A repository's workspace file tries to loosen what the user set (issue 25 #8, #9; ADR 0086).

Each test is a workspace file a hostile repository could ship: it may only narrow the gate, lower every
``[runtime]`` limit and disable a user's MCP server, never the reverse; and a file nested too deeply is a
located config problem for every command that loads config, never an internal error.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ptc_plus.config import Refusal, RuntimeSection, inspect_config, mcp_servers
from ptc_plus.gate import evaluate_gate, resolve_gate_settings
from tests.cli_runner import CliRunner

from .conftest import ConfigFiles

GIB = 1024**3


def loosened(files: ConfigFiles) -> list[tuple[str, str]]:
    return [(issue.path, issue.reason) for issue in files.load().issues]


def test_a_workspace_cannot_start_a_server_the_user_disabled(files: ConfigFiles) -> None:
    files.write(
        user='[mcp.servers.git]\ncommand = "mcp-server-git"\nenabled = false\n',
        workspace="[mcp.servers.git]\nenabled = true\ntimeout_s = 5\n",
    )
    loaded = files.load()
    (refused,) = mcp_servers(loaded, files.workspace).refused
    assert (refused.name, refused.reason) == ("git", Refusal.DISABLED)
    assert loaded.config.mcp.servers["git"].timeout_s == 5  # what starts nothing stays free
    (issue,) = loaded.issues
    assert (issue.path, issue.reason, dict(issue.params)) == (
        "mcp.servers.git.enabled",
        "loosening",
        {"value": "true", "kept": "false"},
    )
    assert "may only tighten" in issue.message("en") and "只能收紧" in issue.message("zh")


def test_a_workspace_may_disable_a_user_server_and_enable_its_own(files: ConfigFiles) -> None:
    files.write(
        user='[mcp.servers.git]\ncommand = "mcp-server-git"\n',
        workspace='[mcp.servers.git]\nenabled = false\n[mcp.servers.own]\ncommand = "own"\nenabled = true\n',
    )
    loaded = files.load()
    assert loaded.issues == ()
    assert not loaded.config.mcp.servers["git"].enabled
    refusals = {entry.name: entry.reason for entry in mcp_servers(loaded, files.workspace).refused}
    assert refusals == {"git": Refusal.DISABLED, "own": Refusal.NOT_TRUSTED}


@pytest.mark.parametrize(
    ("user", "workspace"),
    [
        ('mode = "off"', 'mode = "on"'),
        ('mode = "off"', 'mode = "partial"'),
        ('mode = "partial"\nuser_allowlist = ["alice"]', 'mode = "on"'),
        ("rollout_percent = 0", "rollout_percent = 100"),
        ("rollout_percent = 0", 'rollout_percent = "100"'),
    ],
)
def test_a_workspace_cannot_revive_the_kill_switch(files: ConfigFiles, user: str, workspace: str) -> None:
    files.write(user=f"[gate]\n{user}\n", workspace=f"[gate]\n{workspace}\n")
    loaded = files.load()
    assert evaluate_gate(resolve_gate_settings({}, loaded), user_id="mallory").enabled is False
    assert [(issue.path.split(".")[0], issue.reason) for issue in loaded.issues] == [("gate", "loosening")]


@pytest.mark.parametrize(
    ("user", "workspace", "path"),
    [
        ('mode = "partial"\nuser_allowlist = ["alice"]', 'user_allowlist = ["alice", "mallory"]', "user_allowlist"),
        ('mode = "partial"', 'user_allowlist = ["mallory"]', "user_allowlist"),
        ('toolset_blocklist = ["host"]', "toolset_blocklist = []", "toolset_blocklist"),
        ('toolset_blocklist = ["host", "mcp"]', 'toolset_blocklist = ["mcp"]', "toolset_blocklist"),
        ('toolset_allowlist = ["mcp"]', 'toolset_allowlist = ["mcp", "host"]', "toolset_allowlist"),
        ('toolset_allowlist = ["mcp"]', 'toolset_allowlist = ""', "toolset_allowlist"),
        ("rollout_percent = 10", 'rollout_salt = "mallory-is-in"', "rollout_salt"),
        ('debug = "opt-in"', 'debug = "opt-out"', "debug"),
        ('debug = "opt-in"', 'debug = "sometimes"', "debug"),
    ],
)
def test_a_workspace_cannot_widen_the_gate(files: ConfigFiles, user: str, workspace: str, path: str) -> None:
    files.write(user=f"[gate]\n{user}\n", workspace=f"[gate]\n{workspace}\n")
    loaded = files.load()
    assert loosened(files) == [(f"gate.{path}", "loosening")]
    assert loaded.origins.get(f"gate.{path}") != str(files.workspace_file)


def test_a_loosening_gate_value_keeps_the_user_value_in_force(files: ConfigFiles) -> None:
    files.write(
        user='[gate]\nmode = "partial"\nuser_allowlist = ["alice"]\ntoolset_blocklist = ["host"]\n',
        workspace='[gate]\nuser_allowlist = ["alice", "mallory"]\ntoolset_blocklist = []\n',
    )
    settings = resolve_gate_settings({}, files.load())
    assert evaluate_gate(settings, user_id="mallory").enabled is False
    assert evaluate_gate(settings, user_id="alice", toolsets=["host"]).enabled is False
    assert evaluate_gate(settings, user_id="alice", toolsets=["mcp"]).enabled is True


@pytest.mark.parametrize(
    "workspace",
    [
        'mode = "off"',
        'mode = "partial"',
        "rollout_percent = 10",
        'rollout_percent = "eleventy"',  # invalid counts as 0: narrower still
        'toolset_blocklist = ["host", "web"]',
        'toolset_allowlist = ["mcp"]',
        'debug = "opt-out"',
        'sequential = "true"',
    ],
)
def test_a_workspace_may_narrow_the_gate(files: ConfigFiles, workspace: str) -> None:
    files.write(user='[gate]\ntoolset_blocklist = ["host"]\n', workspace=f"[gate]\n{workspace}\n")
    loaded = files.load()
    assert loaded.issues == ()
    key = workspace.split(" ")[0]
    assert loaded.origins[f"gate.{key}"] == str(files.workspace_file)


def test_a_workspace_cannot_raise_the_runtime_limits(files: ConfigFiles) -> None:
    defaults = RuntimeSection()
    files.write(
        workspace=(
            "[runtime]\n"
            f"memory_bytes = {4 * GIB}\n"
            f"timeout_s = {defaults.timeout_s * 5}\n"
            f"termination_grace_s = {defaults.termination_grace_s * 10}\n"
            f"max_message_bytes = {defaults.max_message_bytes * 4}\n"
            f"max_output_bytes = {defaults.max_output_bytes * 2}\n"
            f"max_pending_calls = {defaults.max_pending_calls * 2}\n"
            f"kernel_idle_s = {defaults.kernel_idle_s * 2}\n"
            f"max_kernels = {defaults.max_kernels * 2}\n"
        )
    )
    loaded = files.load()
    assert loaded.config.runtime == defaults
    assert {path for path, reason in loosened(files) if reason == "loosening"} == {
        f"runtime.{key}"
        for key in (
            "memory_bytes",
            "timeout_s",
            "termination_grace_s",
            "max_message_bytes",
            "max_output_bytes",
            "max_pending_calls",
            "kernel_idle_s",
            "max_kernels",
        )
    }
    memory = next(issue for issue in loaded.issues if issue.path == "runtime.memory_bytes")
    assert dict(memory.params) == {"value": str(4 * GIB), "kept": str(defaults.memory_bytes)}


def test_a_workspace_cannot_raise_what_the_user_file_set(files: ConfigFiles) -> None:
    files.write(user="[runtime]\nmemory_bytes = 268435456\n", workspace="[runtime]\nmemory_bytes = 536870912\n")
    assert files.load().config.runtime.memory_bytes == 268435456
    assert loosened(files) == [("runtime.memory_bytes", "loosening")]


def test_a_workspace_may_lower_the_runtime_limits(files: ConfigFiles) -> None:
    files.write(
        user=f"[runtime]\nmemory_bytes = {2 * GIB}\ntimeout_s = 300\n",
        workspace="[runtime]\nmemory_bytes = 1073741824\ntimeout_s = 300\ntermination_grace_s = 1\n",
    )
    runtime = files.load().config.runtime
    assert (runtime.memory_bytes, runtime.timeout_s, runtime.termination_grace_s) == (GIB, 300, 1)
    assert loosened(files) == []


def deeply_nested(levels: int) -> str:
    """About ``4 * levels`` bytes: 200 KB is 50,000 levels."""
    return "[gate]\nmode = " + "[" * levels + "]" * levels + "\n"


@pytest.mark.parametrize(
    "text",
    [
        deeply_nested(50_000),
        "[gate]\nmode = " + "{ a = " * 20_000 + "1" + " }" * 20_000 + "\n",
        "[gate]\nmode = " + "[" * 40 + "]" * 40 + "\n",  # parses; still deeper than any config
        "x" + ".x" * 40 + " = 1\n",  # dotted keys nest too
    ],
    ids=["arrays-200KB", "inline-tables", "arrays-40", "dotted-keys"],
)
def test_a_deeply_nested_workspace_file_is_a_located_config_problem(files: ConfigFiles, text: str) -> None:
    files.write(user='[gate]\nmode = "on"\n', workspace=text)
    loaded = files.load()
    (issue,) = loaded.issues
    assert (issue.code, issue.file, issue.line) == ("PTC-4004", str(files.workspace_file), 2 if "[gate]" in text else 1)
    assert "32" in issue.message("en") and "嵌套" in issue.message("zh")
    # An unusable workspace file contributes nothing and closes the gate, as one that is not TOML does.
    assert evaluate_gate(resolve_gate_settings({}, loaded), user_id="u").enabled is False
    assert inspect_config(files.workspace, user_file=files.user_file).exit_code == 1


@pytest.mark.parametrize("command", [("config", "check"), ("capabilities", "plan"), ("config", "show")])
def test_every_command_reports_a_deep_file_as_a_config_problem(
    files: ConfigFiles, run_cli: CliRunner, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, command: tuple[str, ...]
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    files.write(workspace=deeply_nested(50_000))
    done = run_cli(*command, "--workspace", str(files.workspace))
    assert f"PTC-4004: {files.workspace_file}:2:38: nested more than 32 levels deep" in done.out + done.err
    assert "RecursionError" not in done.out + done.err and "internal" not in (done.out + done.err).lower()
    assert done.code == (1 if command == ("config", "check") else 0)
