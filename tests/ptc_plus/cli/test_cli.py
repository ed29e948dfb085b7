"""The ``ptc-plus`` command line: through ``main`` in this process, and as a real subprocess where a process is the
point (a whole demo session as a user runs it, a closed standard output)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from ptc_plus import __version__
from ptc_plus.demo import View, run_demo
from tests.cli_runner import CliRunner

CLI = str(Path(sys.executable).with_name("ptc-plus"))


def _run(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    merged = {**os.environ, "PTC_LOCALE": "en", **(env or {})}
    return subprocess.run([CLI, *args], capture_output=True, text=True, cwd=cwd, env=merged, timeout=120)


def test_version(run_cli: CliRunner) -> None:
    done = run_cli("--version")
    assert done.code == 0
    assert done.out.strip() == f"ptc-plus {__version__}"


def test_unknown_subcommand_is_a_usage_error_with_a_code(run_cli: CliRunner) -> None:
    done = run_cli("no-such-command")
    assert done.code == 2
    assert "PTC-1001" in done.err


def test_usage_errors_are_localized(run_cli: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PTC_LOCALE", "zh")
    done = run_cli("no-such-command")
    assert done.code == 2
    assert "用法错误" in done.err


def test_plugins_lists_builtins_first_and_hooks(run_cli: CliRunner) -> None:
    done = run_cli("plugins", "--json")
    assert done.code == 0
    document = done.json()
    assert document["version"] == 1
    rows = document["plugins"]
    assert rows[0]["name"] == "agent-host-builtins" and rows[0]["builtin"]
    assert "agent_host_tool_execute" in rows[0]["hooks"]
    ptc = next(r for r in rows if r["name"] == "ptc_plus")
    assert ptc["distribution"] == "ptc-plus"


def test_plugins_shows_blocked_entry_points(run_cli: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENT_HOST_DISABLE_PLUGINS", "ptc_plus")
    rows = {r["name"]: r for r in run_cli("plugins", "--json").json()["plugins"]}
    assert rows["ptc_plus"]["blocked"] and rows["ptc_plus"]["hooks"] == []


def test_demo_runs_a_whole_session(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    done = _run("demo", "--verbose", "--workspace", str(tmp_path / "ws"))
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "System prompt sections:" in out
    if "code mode on" in out:  # bubblewrap works here: one program does the work through nested calls
        assert "Offered to the model as function tools: run_code" in out
        assert re.search(r"← call-1-1-0@s-\w+ ok", out), out  # host-assigned ids name the session (ADR 0089)
        assert re.search(r"← call-1-1-0@s-\w+:ptc:1 ok", out) and "convert_units" in out
        assert "discovered convert_units" in out  # an on-demand tool found with capabilities.search
    else:  # presented natively, and the demo says why
        assert "code mode off" in out
        assert re.search(r"← call-1-1-1@s-\w+ ok", out), out
    assert "notes_add" in out
    assert "Resumed from the log" in out
    assert (tmp_path / "ws" / ".demo" / "notes.sqlite").exists()


def test_a_closed_stdout_ends_quietly(tmp_path: Path) -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)  # like `| head` that already exited: every write gets EPIPE
    try:
        merged = {**os.environ, "PTC_LOCALE": "en", "XDG_CONFIG_HOME": str(tmp_path / "xdg")}
        done = subprocess.run(
            [CLI, "capabilities", "plan", "--workspace", str(tmp_path)],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            env=merged,
            timeout=120,
        )
    finally:
        os.close(write_end)
    assert done.returncode == 1
    assert "Traceback" not in done.stderr and "BrokenPipeError" not in done.stderr and "Exception" not in done.stderr


@pytest.mark.asyncio
async def test_demo_lists_only_loaded_plugins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENT_HOST_DISABLE_PLUGINS", "ptc_plus")
    lines: list[str] = []
    assert await run_demo(None, view=View(out=lines.append, verbose=True)) == 0
    (plugins,) = [line for line in lines if line.startswith("Plugins loaded:")]
    assert "ptc_plus" not in plugins and "agent-host-builtins" in plugins
