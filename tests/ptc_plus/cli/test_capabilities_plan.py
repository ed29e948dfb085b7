"""``ptc-plus capabilities plan`` and ``ptc-plus capabilities set``, run in-process."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.cli_runner import CliRunner


def plan_json(workspace: Path, run_cli: CliRunner) -> dict[str, Any]:
    done = run_cli("capabilities", "plan", "--workspace", str(workspace), "--json")
    assert done.code == 0
    document: dict[str, Any] = done.json()
    return document


def test_plan_defaults_to_the_host_provision(tmp_path: Path, run_cli: CliRunner) -> None:
    # Management is on by default (ADR 0080); the demo tools' contracts all fit the default budget.
    document = plan_json(tmp_path, run_cli)
    assert document["version"] == 1 and document["config_files"] == []
    assert document["plan"]["management"] is True
    entries = document["plan"]["entries"]
    assert entries and {e["disclosure"] for e in entries} == {"full"}
    assert {e["reason"] for e in entries} == {"fits-budget"}
    assert document["reasons"]["host:read_file"] == "the whole catalog fits the budget: shown in full"


def test_plan_with_management_off_is_the_host_provision(tmp_path: Path, run_cli: CliRunner) -> None:
    config = tmp_path / ".ptc-plus" / "config.toml"
    config.parent.mkdir()
    config.write_text("version = 1\n\n[management]\nenabled = false\nbudget_tokens = 10\n", "utf-8")
    document = plan_json(tmp_path, run_cli)
    assert document["plan"]["management"] is False
    entries = document["plan"]["entries"]
    assert entries and {e["disclosure"] for e in entries} == {"full"}
    assert document["reasons"]["host:read_file"] == "management is off: the host's own provision"


def test_set_then_plan_shows_choices_reasons_and_overage(tmp_path: Path, run_cli: CliRunner) -> None:
    config = tmp_path / ".ptc-plus" / "config.toml"
    config.parent.mkdir()
    config.write_text("# my settings\nversion = 1\n\n[management]\nenabled = true\nbudget_tokens = 10\n", "utf-8")
    assert run_cli("capabilities", "set", "host:search_files", "full", "--workspace", str(tmp_path)).code == 0
    done = run_cli("capabilities", "set", "host:write_file", "off", "--workspace", str(tmp_path))
    assert done.code == 0
    assert "now off (was inherited)" in done.out
    assert config.read_text("utf-8").startswith("# my settings\n")  # comments kept
    document = plan_json(tmp_path, run_cli)
    by_id = {e["identity"]: e for e in document["plan"]["entries"]}
    assert by_id["host:search_files"]["disclosure"] == "full" and by_id["host:search_files"]["overage"]
    assert document["plan"]["overage_tokens"] > 0
    assert by_id["host:write_file"]["disclosure"] == "off"
    assert document["reasons"]["host:write_file"] == "explicit choice in the config"
    done = run_cli("capabilities", "plan", "--workspace", str(tmp_path))
    assert done.code == 0
    text = done.out
    assert "host:search_files [full]: explicit choice in the config — over budget, kept in full" in text
    assert "1 off" in text
    done = run_cli("capabilities", "set", "host:write_file", "inherit", "--workspace", str(tmp_path))
    assert done.code == 0
    assert "now inherited (was off)" in done.out
    assert "off" not in {e["disclosure"] for e in plan_json(tmp_path, run_cli)["plan"]["entries"]}


def test_set_refuses_an_unknown_value(tmp_path: Path, run_cli: CliRunner) -> None:
    done = run_cli("capabilities", "set", "host:read_file", "sometimes", "--workspace", str(tmp_path))
    assert done.code == 2
    assert "PTC-4021" in done.err
    assert not (tmp_path / ".ptc-plus" / "config.toml").exists()
