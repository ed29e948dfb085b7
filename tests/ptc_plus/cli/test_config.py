"""``ptc-plus config init|show|check`` through the CLI: exit codes, text, and one versioned JSON object."""

from __future__ import annotations

import os
import stat
import tomllib
from pathlib import Path

import orjson
import pytest

from tests.cli_runner import CliRunner


def write(workspace: Path, text: str) -> Path:
    path = workspace / ".ptc-plus" / "config.toml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_init_writes_a_starter_that_checks_clean_and_refuses_to_overwrite(workspace: Path, run_cli: CliRunner) -> None:
    previous = os.umask(0o022)
    try:
        first = run_cli("config", "init", "--workspace", str(workspace))
    finally:
        os.umask(previous)
    path = workspace / ".ptc-plus" / "config.toml"
    assert first.code == 0 and str(path) in first.out
    written = path.read_text(encoding="utf-8")  # committed with the project: no path of this machine in it
    assert written.startswith("# PTC Plus workspace config") and "file://" not in written
    assert stat.S_IMODE(path.stat().st_mode) == 0o644
    assert run_cli("config", "check", "--workspace", str(workspace)).code == 0
    path.write_text("version = 1\n", encoding="utf-8")
    again = run_cli("config", "init", "--workspace", str(workspace))
    assert again.code == 1 and "PTC-4023" in again.err and "--force" in again.err
    assert path.read_text(encoding="utf-8") == "version = 1\n"
    assert run_cli("config", "init", "--workspace", str(workspace), "--force").code == 0
    assert "[runtime]" in path.read_text(encoding="utf-8")


def test_init_user_writes_the_user_file(workspace: Path, tmp_path: Path, run_cli: CliRunner) -> None:
    result = run_cli("config", "init", "--user", "--json")
    document = orjson.loads(result.out)
    user_file = tmp_path / "xdg" / "ptc-plus" / "config.toml"
    assert result.code == 0 and document == {"version": 1, "scope": "user", "path": str(user_file), "problems": []}
    assert tomllib.loads(user_file.read_text(encoding="utf-8"))["version"] == 1
    assert run_cli("config", "init", "--user").code == 1


@pytest.mark.parametrize(
    ("text", "code", "expected"),
    [
        ('version = 1\n[runtime]\npolicy = "read-only"\n', 0, "No problems found"),
        ("version = 1\n[runtime\n", 1, ":2:9: not valid TOML: Expected ']'"),
        ("[runtime]\ntimout_s = 3\n", 1, ":2:1: runtime.timout_s: unknown key; did you mean 'timeout_s'?"),
        ('[statistics]\nwindow = "ten"\n', 1, ":2:1: statistics.window: expected an integer"),
        ("version = 7\n", 1, ":1:1: config format version 7 is not supported"),
    ],
    ids=["good", "bad-toml", "unknown-key", "wrong-type", "future-version"],
)
def test_check_exit_codes(workspace: Path, run_cli: CliRunner, text: str, code: int, expected: str) -> None:
    write(workspace, text)
    result = run_cli("config", "check", "--workspace", str(workspace))
    assert result.code == code
    assert expected in result.out
    assert "Traceback" not in result.out + result.err


def test_check_json_is_one_versioned_object_with_the_same_exit_code(workspace: Path, run_cli: CliRunner) -> None:
    path = write(workspace, "[runtime]\ntimout_s = 3\n")
    result = run_cli("config", "check", "--workspace", str(workspace), "--json")
    document = orjson.loads(result.out)
    assert result.code == 1
    assert document["version"] == 1 and document["ok"] is False
    (problem,) = document["problems"]
    assert (problem["file"], problem["line"], problem["column"], problem["path"]) == (
        str(path),
        2,
        1,
        "runtime.timout_s",
    )


def test_check_of_an_unreadable_file_is_a_problem_not_a_traceback(workspace: Path, run_cli: CliRunner) -> None:
    (workspace / ".ptc-plus" / "config.toml").mkdir(parents=True)
    result = run_cli("config", "check", "--workspace", str(workspace))
    assert result.code == 1 and "PTC" not in result.err and "not a regular file" in result.out


def test_show_prints_every_key_and_its_source(workspace: Path, run_cli: CliRunner) -> None:
    write(workspace, "[runtime]\ntimeout_s = 5\n")
    result = run_cli("config", "show", "--workspace", str(workspace))
    assert result.code == 0
    assert "runtime.timeout_s = 5.0  # workspace file" in result.out
    assert "statistics.window = 20  # default" in result.out
    document = orjson.loads(run_cli("config", "show", "--workspace", str(workspace), "--json").out)
    assert document["version"] == 1
    assert {
        "key": "runtime.timeout_s",
        "value": 5,
        "source": "workspace",
        "file": str(workspace / ".ptc-plus" / "config.toml"),
    } in document["keys"]


def test_show_in_chinese(workspace: Path, run_cli: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PTC_LOCALE", "zh")
    write(workspace, "[runtime]\ntimout_s = 5\n")
    result = run_cli("config", "check", "--workspace", str(workspace))
    assert result.code == 1 and "未知的键" in result.out and "发现 1 个问题" in result.out


def test_a_missing_workspace_is_a_usage_error(tmp_path: Path, run_cli: CliRunner) -> None:
    result = run_cli("config", "check", "--workspace", str(tmp_path / "nope"))
    assert result.code == 2 and "PTC-1002" in result.err
    assert not (tmp_path / "nope").exists()


def test_init_names_the_problems_of_the_other_file(workspace: Path, tmp_path: Path, run_cli: CliRunner) -> None:
    user_file = tmp_path / "xdg" / "ptc-plus" / "config.toml"
    user_file.parent.mkdir(parents=True)
    user_file.write_bytes(b"version = 1\n# caf\xe9\n")
    done = run_cli("config", "init", "--workspace", str(workspace))
    assert done.code == 0 and "PTC-4001" in done.err and str(user_file) in done.err


def test_show_marks_an_unusable_file(workspace: Path, run_cli: CliRunner) -> None:
    (workspace / ".ptc-plus").mkdir()
    (workspace / ".ptc-plus" / "config.toml").write_text("[runtime\n", encoding="utf-8")
    done = run_cli("config", "show", "--workspace", str(workspace), "--json")
    (workspace_file,) = [f for f in done.json()["files"] if f["scope"] == "workspace"]
    assert workspace_file["exists"] and not workspace_file["usable"]
    plain = run_cli("config", "show", "--workspace", str(workspace))
    assert "could not be used" in plain.out and "PTC-4002" in plain.out
