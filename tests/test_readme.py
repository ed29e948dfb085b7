"""The README's examples are real: its config example passes ``config check``."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.cli_runner import CliRunner

README = Path(__file__).resolve().parent.parent / "README.md"


def test_the_config_example_is_clean_and_does_what_it_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_cli: CliRunner
) -> None:
    (example,) = re.findall(r"```toml\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    (tmp_path / ".ptc-plus").mkdir()
    (tmp_path / ".ptc-plus" / "config.toml").write_text(example, encoding="utf-8")
    checked = run_cli("config", "check", "--workspace", str(tmp_path), "--json")
    assert checked.code == 0 and checked.json()["problems"] == [], checked.out
    plan = run_cli("capabilities", "plan", "--workspace", str(tmp_path), "--json").json()
    disclosures = {entry["identity"]: entry["disclosure"] for entry in plan["plan"]["entries"]}
    assert disclosures["host:write_file"] == "off" and disclosures["host:notes_add"] == "full"


def test_no_link_leaves_the_repository() -> None:
    text = README.read_text(encoding="utf-8")
    for target in re.findall(r"\]\(([^)#]+)\)", text):
        if "://" not in target:
            assert (README.parent / target).exists(), target
    assert "SPEC.md" not in text and "../" not in text
