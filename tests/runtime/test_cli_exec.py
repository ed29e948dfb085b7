"""``ptc-plus exec``: the human entry point, through the reference host."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from ptc_plus.cli import main


def _exec(
    argv: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, stdin: str = ""
) -> tuple[int, str, str]:
    monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    code = main(["exec", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_json_success_with_demo_tools(
    workspace: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (workspace / "notes.txt").write_text("alpha\nbeta\n")
    program = "r = await tools.read_file(path='notes.txt')\nprint('lines', len(r['lines']))\nreturn r['lines']\n"
    code, out, _ = _exec(["--tools", "demo", "--workspace", str(workspace), "--json"], capsys, monkeypatch, program)
    assert code == 0
    shape = json.loads(out)
    assert list(shape) == ["ok", "value", "error", "logs", "calls", "notes"]
    assert shape == {
        "ok": True,
        "value": ["alpha", "beta"],
        "error": None,
        "logs": [{"stream": "stdout", "text": "lines 2\n"}],
        "calls": 1,
        "notes": [],
    }
    assert out.count("\n") == 1


def test_json_failure_names_the_tool(
    workspace: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    program = tmp_path / "program.py"
    program.write_text("await tools.read_file(path='missing.txt')\n")
    code, out, _ = _exec(
        [str(program), "--tools", "demo", "--workspace", str(workspace), "--json"], capsys, monkeypatch
    )
    assert code == 1
    shape = json.loads(out)
    assert shape["ok"] is False and shape["error"]["kind"] == "exception"
    assert shape["error"]["tool_name"] == "read_file" and shape["calls"] == 1


def test_human_output_and_timeout(
    workspace: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    code, out, err = _exec(["--workspace", str(workspace)], capsys, monkeypatch, "print('hi')\n{'n': 1}")
    assert code == 0 and out == 'hi\n=> {"n":1}\n'
    code, out, err = _exec(
        ["--workspace", str(workspace), "--timeout", "0.3", "--policy", "danger-full-access"],
        capsys,
        monkeypatch,
        "while True:\n    pass",
    )
    assert code == 1 and "timeout" in err


def test_a_clamped_timeout_is_reported_in_both_forms(
    workspace: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    argv = ["--workspace", str(workspace), "--policy", "danger-full-access", "--timeout", "100000"]
    code, out, _ = _exec([*argv, "--json"], capsys, monkeypatch, "1")
    shape = json.loads(out)
    assert code == 0 and shape["value"] == 1
    assert len(shape["notes"]) == 1 and "100000" in shape["notes"][0] and "600" in shape["notes"][0]
    code, out, err = _exec(argv, capsys, monkeypatch, "1")
    assert code == 0 and shape["notes"][0] in err


def test_demo_tools_come_with_discovery(
    workspace: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    program = "found = await capabilities.find('read_file')\nreturn [m['name'] for m in found['matches']]\n"
    argv = ["--tools", "demo", "--workspace", str(workspace), "--policy", "danger-full-access", "--json"]
    code, out, _ = _exec(argv, capsys, monkeypatch, program)
    shape = json.loads(out)
    assert code == 0, shape
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
def test_usage_errors_exit_2(
    argv: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    code, _, err = _exec(argv, capsys, monkeypatch, "1")
    assert code == 2
    assert "PTC-" in err
