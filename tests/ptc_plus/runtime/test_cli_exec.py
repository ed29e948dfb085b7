"""``ptc-plus exec``: the human entry point, through the reference host."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli_runner import CliRunner


def test_json_success_with_demo_tools(workspace: Path, run_cli: CliRunner) -> None:
    (workspace / "notes.txt").write_text("alpha\nbeta\n")
    program = "r = await tools.read_file(path='notes.txt')\nprint('lines', len(r['lines']))\nreturn r['lines']\n"
    done = run_cli("exec", "--tools", "demo", "--workspace", str(workspace), "--json", stdin=program)
    assert done.code == 0
    shape = done.json()
    assert list(shape) == ["ok", "value", "error", "logs", "calls", "notes"]
    assert shape == {
        "ok": True,
        "value": ["alpha", "beta"],
        "error": None,
        "logs": [{"stream": "stdout", "text": "lines 2\n"}],
        "calls": 1,
        "notes": [],
    }
    assert done.out.count("\n") == 1


def test_json_failure_names_the_tool(workspace: Path, tmp_path: Path, run_cli: CliRunner) -> None:
    program = tmp_path / "program.py"
    program.write_text("await tools.read_file(path='missing.txt')\n")
    done = run_cli("exec", str(program), "--tools", "demo", "--workspace", str(workspace), "--json")
    assert done.code == 1
    shape = done.json()
    assert shape["ok"] is False and shape["error"]["kind"] == "exception"
    assert shape["error"]["tool_name"] == "read_file" and shape["calls"] == 1


def test_human_output_and_timeout(workspace: Path, run_cli: CliRunner) -> None:
    done = run_cli("exec", "--workspace", str(workspace), stdin="print('hi')\n{'n': 1}")
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
    "argv",
    [
        ["--timeout", "0"],
        ["--timeout", "-1"],
        ["--policy", "yolo"],
        ["--tools", "no_such_module:factory"],
        ["--tools", "nocolon"],
        ["/no/such/program.py"],
        ["--workspace", "/no/such/dir"],
    ],
)
def test_usage_errors_exit_2(argv: list[str], run_cli: CliRunner) -> None:
    done = run_cli("exec", *argv, stdin="1")
    assert done.code == 2
    assert "PTC-" in done.err
