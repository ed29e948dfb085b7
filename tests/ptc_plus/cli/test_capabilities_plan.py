"""``ptc-plus capabilities plan`` and ``ptc-plus capabilities set``, run in-process."""

from __future__ import annotations

import os
from pathlib import Path

import orjson
import pytest

from ptc_plus.cli import main


@pytest.fixture(autouse=True)
def isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for key in list(os.environ):
        if key.startswith("PTC_"):
            monkeypatch.delenv(key)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))


def plan_json(workspace: Path, capsys: pytest.CaptureFixture[str]) -> dict:  # type: ignore[type-arg]
    assert main(["capabilities", "plan", "--workspace", str(workspace), "--json"]) == 0
    return orjson.loads(capsys.readouterr().out)  # type: ignore[no-any-return]


def test_plan_defaults_to_the_host_provision(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    document = plan_json(tmp_path, capsys)
    assert document["version"] == 1 and document["config_files"] == []
    entries = document["plan"]["entries"]
    assert entries and {e["disclosure"] for e in entries} == {"full"}
    assert document["reasons"]["host:read_file"] == "management is off: the host's own provision"


def test_set_then_plan_shows_choices_reasons_and_overage(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / ".ptc-plus" / "config.toml"
    config.parent.mkdir()
    config.write_text("# my settings\nversion = 1\n\n[management]\nenabled = true\nbudget_tokens = 10\n", "utf-8")
    assert main(["capabilities", "set", "host:search_files", "full", "--workspace", str(tmp_path)]) == 0
    assert main(["capabilities", "set", "host:write_file", "off", "--workspace", str(tmp_path)]) == 0
    assert "now off (was inherited)" in capsys.readouterr().out
    assert config.read_text("utf-8").startswith("# my settings\n")  # comments kept
    document = plan_json(tmp_path, capsys)
    by_id = {e["identity"]: e for e in document["plan"]["entries"]}
    assert by_id["host:search_files"]["disclosure"] == "full" and by_id["host:search_files"]["overage"]
    assert document["plan"]["overage_tokens"] > 0
    assert by_id["host:write_file"]["disclosure"] == "off"
    assert document["reasons"]["host:write_file"] == "explicit choice in the config"
    assert main(["capabilities", "plan", "--workspace", str(tmp_path)]) == 0
    text = capsys.readouterr().out
    assert "host:search_files [full]: explicit choice in the config — over budget, kept in full" in text
    assert "1 off" in text
    assert main(["capabilities", "set", "host:write_file", "inherit", "--workspace", str(tmp_path)]) == 0
    assert "now inherited (was off)" in capsys.readouterr().out
    assert "off" not in {e["disclosure"] for e in plan_json(tmp_path, capsys)["plan"]["entries"]}


def test_set_refuses_an_unknown_value(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["capabilities", "set", "host:read_file", "sometimes", "--workspace", str(tmp_path)]) == 2
    assert "PTC-4021" in capsys.readouterr().err
    assert not (tmp_path / ".ptc-plus" / "config.toml").exists()
