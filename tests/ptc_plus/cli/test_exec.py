"""``ptc-plus exec``: the human entry point, through the reference host (its ``--json`` contract and usage errors)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli_runner import CliRunner

JSON_KEYS = ["calls", "error", "logs", "notes", "ok", "value", "version"]
"""Every key ``exec --json`` prints, and only those (its help lists them)."""


@pytest.mark.needs_bwrap
def test_json_success_with_demo_tools(workspace: Path, run_cli: CliRunner) -> None:
    (workspace / "notes.txt").write_text("alpha\nbeta\n")
    program = "r = await tools.read_file(path='notes.txt')\nprint('lines', len(r['lines']))\nreturn r['lines']\n"
    done = run_cli("exec", "--tools", "demo", "--workspace", str(workspace), "--json", stdin=program)
    assert done.code == 0
    shape = done.json()
    assert sorted(shape) == JSON_KEYS
    assert shape == {
        "version": 1,
        "ok": True,
        "value": ["alpha", "beta"],
        "error": None,
        "logs": [{"stream": "stdout", "text": "lines 2\n"}],
        "calls": 1,
        "notes": [],
    }


@pytest.mark.needs_bwrap
def test_json_failure_names_the_tool(workspace: Path, tmp_path: Path, run_cli: CliRunner) -> None:
    program = tmp_path / "program.py"
    program.write_text("await tools.read_file(path='missing.txt')\n")
    done = run_cli("exec", str(program), "--tools", "demo", "--workspace", str(workspace), "--json")
    assert done.code == 1
    shape = done.json()
    assert sorted(shape) == JSON_KEYS and shape["version"] == 1
    assert shape["ok"] is False and shape["error"]["kind"] == "exception"
    assert sorted(shape["error"]) == ["code", "kind", "message", "tool_name"]
    assert shape["error"]["code"] == "PTC-2101"  # the outcome's stable code, like every --json error
    assert shape["error"]["tool_name"] == "read_file" and shape["calls"] == 1


def test_the_json_help_lists_exactly_the_keys_printed(run_cli: CliRunner) -> None:
    done = run_cli("exec", "--help")
    assert done.code == 0
    help_text = " ".join(done.out.split())
    for key in JSON_KEYS:
        assert f'"{key}"' in help_text
    for key in ("kind", "message", "tool_name", "stream", "text"):
        assert f'"{key}"' in help_text


def test_human_output_and_timeout(workspace: Path, run_cli: CliRunner) -> None:
    done = run_cli(
        "exec", "--workspace", str(workspace), "--policy", "danger-full-access", stdin="print('hi')\n{'n': 1}"
    )
    assert done.code == 0 and done.out == 'hi\n=> {"n":1}\n'
    argv = ["--workspace", str(workspace), "--timeout", "0.3", "--policy", "danger-full-access"]
    done = run_cli("exec", *argv, stdin="while True:\n    pass")
    assert done.code == 1 and "timeout" in done.err


def test_a_clamped_timeout_is_reported_in_both_forms(workspace: Path, run_cli: CliRunner) -> None:
    argv = ["--workspace", str(workspace), "--policy", "danger-full-access", "--timeout", "100000"]
    done = run_cli("exec", *argv, "--json", stdin="1")
    shape = done.json()
    assert done.code == 0 and shape["value"] == 1
    assert len(shape["notes"]) == 1 and "100000" in shape["notes"][0] and "600" in shape["notes"][0]
    done = run_cli("exec", *argv, stdin="1")
    assert done.code == 0 and shape["notes"][0] in done.err


def test_demo_tools_come_with_discovery(workspace: Path, run_cli: CliRunner) -> None:
    program = "found = await capabilities.find('read_file')\nreturn [m['name'] for m in found['matches']]\n"
    argv = ["--tools", "demo", "--workspace", str(workspace), "--policy", "danger-full-access", "--json"]
    done = run_cli("exec", *argv, stdin=program)
    shape = done.json()
    assert done.code == 0, shape
    assert "read_file" in shape["value"]


@pytest.mark.parametrize(
    ("argv", "code"),
    [
        (["--timeout", "0"], "PTC-1001"),
        (["--timeout", "-1"], "PTC-1001"),
        (["--timeout", "nan"], "PTC-1001"),
        (["--policy", "yolo"], "PTC-1001"),
        (["--tools", "no_such_module:factory"], "PTC-3005"),
        (["--tools", "no colon"], "PTC-3004"),
        (["--tools", "missing.json"], "PTC-3001"),
        (["/no/such/program.py"], "PTC-1001"),
    ],
)
def test_usage_errors_exit_2(argv: list[str], code: str, workspace: Path, run_cli: CliRunner) -> None:
    done = run_cli("exec", "--workspace", str(workspace), *argv, stdin="1")
    assert done.code == 2
    assert code in done.err and "Traceback" not in done.err
    assert "--help" in done.err  # the usage hint


@pytest.mark.parametrize("kind", ["missing", "file"])
def test_workspace_must_be_an_existing_directory(kind: str, tmp_path: Path, run_cli: CliRunner) -> None:
    target = tmp_path / "nope"
    if kind == "file":
        target.write_text("not a directory\n")
    done = run_cli("exec", "--workspace", str(target), stdin="1")
    assert done.code == 2 and "PTC-1002" in done.err and "Traceback" not in done.err
    assert not (target / ".ptc-plus").exists()
    assert target.exists() == (kind == "file")  # nothing created


def test_without_tools_exec_says_which_tool_set_it_uses(workspace: Path, run_cli: CliRunner) -> None:
    done = run_cli("exec", "--workspace", str(workspace), "--policy", "danger-full-access", stdin="return 1")
    assert done.code == 0
    lines = [line for line in done.err.splitlines() if line.startswith("tools:")]
    assert len(lines) == 1 and "none" in lines[0] and "--tools" in lines[0]


def test_a_missing_sandbox_ends_the_run_with_a_way_out(workspace: Path, tmp_path: Path) -> None:
    # As on a machine without bubblewrap (macOS): the real executable, with no bwrap on PATH.
    empty = tmp_path / "bin"
    empty.mkdir()
    env = {**os.environ, "PATH": str(empty)}
    done = subprocess.run(
        [str(Path(sys.executable).with_name("ptc-plus")), "exec", "--workspace", str(workspace)],
        input="print('hi')",
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 1 and "hi" not in done.stdout
    assert "error [sandbox-unavailable]" in done.stderr and "--policy danger-full-access" in done.stderr
    assert "Traceback" not in done.stderr


def test_exec_executor_gvisor_without_runsc_is_sandbox_unavailable_with_a_hint(workspace: Path, tmp_path: Path) -> None:
    # ADR 0127: the chosen executor missing is never a run under another one (bubblewrap is installed here).
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    bwrap = shutil.which("bwrap")
    if bwrap is not None:
        (bin_dir / "bwrap").symlink_to(bwrap)
    env = {**os.environ, "PATH": str(bin_dir)}
    done = subprocess.run(
        [
            str(Path(sys.executable).with_name("ptc-plus")),
            "exec",
            "--workspace",
            str(workspace),
            "--executor",
            "gvisor",
        ],
        input="print('hi')",
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 1 and "hi" not in done.stdout, done.stderr
    assert "error [sandbox-unavailable]" in done.stderr and "runsc" in done.stderr
    assert "apt-get install runsc" in done.stderr and "Traceback" not in done.stderr
