"""``ptc-plus sdk`` and ``ptc-plus capabilities search`` through ``main`` (in process) and one real subprocess."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ptc_plus.cli import main

DATA = Path(__file__).resolve().parent.parent / "data"
EXECUTABLE = Path(sys.executable).with_name("ptc-plus")


@pytest.fixture(autouse=True)
def english(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PTC_LOCALE", "en")


def test_sdk_prints_a_module_and_its_cost(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sdk", "--tools", str(DATA / "mcp" / "time.json")]) == 0
    out, err = capsys.readouterr()
    ast.parse(out)
    assert "async def convert_time(" in out and "class TimeResult(TypedDict):" in out
    assert err.startswith("# cost: ") and "o200k_base tokens (2 tools, 2 shared type declarations)" in err


def test_sdk_budget_delivers_whole_contracts_and_names_the_rest(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sdk", "--tools", str(DATA / "mcp" / "git.json"), "--budget", "200"]) == 0
    out, err = capsys.readouterr()
    ast.parse(out)
    assert "async def git_add(" in out
    assert "# not expanded (" in err and "mcp:git/git_log needs" in err


def test_sdk_accepts_a_plain_list_with_mcp_spellings(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tools = tmp_path / "tools.json"
    tools.write_text(
        json.dumps(
            [
                {
                    "name": "ping-host",
                    "description": "Ping.",
                    "inputSchema": {"type": "object", "properties": {"host": {"type": "string"}}, "required": ["host"]},
                }
            ]
        )
    )
    assert main(["sdk", "--tools", str(tools)]) == 0
    assert "async def ping_host(*, host: str) -> Any:" in capsys.readouterr().out


def test_sdk_reports_bad_files_and_bad_budgets(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    assert main(["sdk", "--tools", str(bad)]) == 2  # a bad file named on the command line is a usage error
    assert "PTC-3001" in capsys.readouterr().err
    assert main(["sdk", "--tools", str(DATA / "mcp" / "time.json"), "--budget", "0"]) == 2


def test_capabilities_search_over_the_workspace_demo_tools(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["capabilities", "search", "convert units", "--workspace", str(tmp_path), "--limit", "3"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith("1. host:convert_units  score ")
    assert not any(tmp_path.iterdir())  # searching the catalog runs no tool


def test_capabilities_search_json_is_the_discovery_response(capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(
            [
                "capabilities",
                "search",
                "查看提交历史",
                "--tools",
                str(DATA / "mcp" / "git.json"),
                "--json",
                "--budget",
                "300",
            ]
        )
        == 0
    )
    response = json.loads(capsys.readouterr().out)
    assert response["expanded"][0]["identity"] == "mcp:git/git_log"
    assert response["tokens"] <= 300 and response["unit"] == "o200k_base tokens"


def test_capabilities_needs_a_subcommand(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["capabilities"]) == 2
    assert "PTC-1001" in capsys.readouterr().err


def test_installed_command_runs(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PTC_")} | {"PTC_LOCALE": "zh"}
    done = subprocess.run(
        [str(EXECUTABLE), "capabilities", "search", "笔记", "--limit", "2"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "host:notes_" in done.stdout and "得分" in done.stdout
