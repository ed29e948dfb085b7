"""``ptc-plus sdk`` and ``ptc-plus capabilities search`` through ``main`` (in process) and one installed command."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from tests.cli_runner import CliRunner
from tests.scaffolding import clean_environment, run_installed

DATA = Path(__file__).resolve().parents[2] / "data"


@pytest.fixture(autouse=True)
def english(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PTC_LOCALE", "en")


def test_sdk_prints_a_module_and_its_cost(run_cli: CliRunner) -> None:
    done = run_cli("sdk", "--tools", str(DATA / "mcp" / "time.json"))
    assert done.code == 0
    out, err = done.out, done.err
    ast.parse(out)
    assert "async def convert_time(" in out and "class TimeResult(TypedDict):" in out
    assert err.startswith("# cost: ") and "o200k_base tokens (2 tools, 2 shared type declarations)" in err


def test_sdk_budget_delivers_whole_contracts_and_names_the_rest(run_cli: CliRunner) -> None:
    done = run_cli("sdk", "--tools", str(DATA / "mcp" / "git.json"), "--budget", "200")
    assert done.code == 0
    out, err = done.out, done.err
    ast.parse(out)
    assert "async def git_add(" in out
    assert "# not expanded (" in err and "mcp:git/git_log needs" in err


def test_sdk_accepts_a_plain_list_with_mcp_spellings(tmp_path: Path, run_cli: CliRunner) -> None:
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
    done = run_cli("sdk", "--tools", str(tools))
    assert done.code == 0
    assert "async def ping_host(*, host: str) -> Any:" in done.out


def test_sdk_reports_bad_files_and_bad_budgets(tmp_path: Path, run_cli: CliRunner) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    done = run_cli("sdk", "--tools", str(bad))
    assert done.code == 2  # a bad file named on the command line is a usage error
    assert "PTC-3001" in done.err
    assert run_cli("sdk", "--tools", str(DATA / "mcp" / "time.json"), "--budget", "0").code == 2


def test_capabilities_search_over_the_workspace_demo_tools(tmp_path: Path, run_cli: CliRunner) -> None:
    done = run_cli("capabilities", "search", "convert units", "--workspace", str(tmp_path), "--limit", "3")
    assert done.code == 0
    out = done.out
    assert out.splitlines()[0].startswith("1. host:convert_units  score ")
    assert not any(tmp_path.iterdir())  # searching the catalog runs no tool


def test_capabilities_search_json_is_the_discovery_response(run_cli: CliRunner) -> None:
    done = run_cli(
        "capabilities", "search", "查看提交历史", "--tools", str(DATA / "mcp" / "git.json"), "--json", "--budget", "300"
    )
    assert done.code == 0
    response = done.json()
    assert response["expanded"][0]["identity"] == "mcp:git/git_log"
    assert response["tokens"] <= 300 and response["unit"] == "o200k_base tokens"


def test_capabilities_search_fuses_several_queries(tmp_path: Path, run_cli: CliRunner) -> None:
    args = ("--workspace", str(tmp_path), "--limit", "4", "--json")
    units = run_cli("capabilities", "search", "convert units", *args).json()
    notes = run_cli("capabilities", "search", "jot down a note", *args).json()
    both = run_cli("capabilities", "search", "convert units", "jot down a note", *args).json()
    assert both["query"] == ["convert units", "jot down a note"]
    ranked = [m["identity"] for m in (*both["expanded"], *both["not_expanded"])]
    assert ranked[:2] == [units["expanded"][0]["identity"], notes["expanded"][0]["identity"]]
    assert run_cli("capabilities", "search", *args[:2]).code == 2  # at least one QUERY
    too_many = run_cli("capabilities", "search", *(["q"] * 9), *args[:2])
    assert too_many.code == 2 and "PTC-3105" in too_many.err


def test_capabilities_needs_a_subcommand(run_cli: CliRunner) -> None:
    done = run_cli("capabilities")
    assert done.code == 2
    assert "PTC-1001" in done.err


def test_installed_command_runs(tmp_path: Path) -> None:
    argv = ["capabilities", "search", "笔记", "--limit", "2"]
    done = run_installed(argv, clean_environment(tmp_path, PTC_LOCALE="zh"), cwd=tmp_path)
    assert done.code == 0, done.err
    assert "host:notes_" in done.out and "得分" in done.out
