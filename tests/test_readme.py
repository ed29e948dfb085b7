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


def test_the_mcp_add_example_writes_what_the_readme_shows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_cli: CliRunner
) -> None:
    text = README.read_text(encoding="utf-8")
    (command,) = re.findall(r"<!-- mcp-add-example -->\n```\n(.*?)\n```", text, re.S)
    (shown,) = re.findall(r"<!-- mcp-add-writes -->\n```\n(.*?)```", text, re.S)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    (tmp_path / "ws").mkdir()
    arguments = command.split()
    assert arguments[:3] == ["ptc-plus", "mcp", "add"]
    done = run_cli(*arguments[1:3], "--workspace", str(tmp_path / "ws"), *arguments[3:])
    assert done.code == 0, done.err
    assert (tmp_path / "ws" / ".ptc-plus" / "config.toml").read_text(encoding="utf-8") == shown


def test_the_install_size_the_readme_quotes_is_the_measured_one() -> None:
    import orjson

    measured = orjson.loads((README.parent / "benchmarks" / "results" / "install_size.json").read_bytes())
    text = README.read_text(encoding="utf-8")
    whole = round(float(measured["site_packages_mb"]))
    bare = round(float(measured["site_packages_less_pip_setuptools_mb"]))
    assert f"about {whole} MB of `site-packages` ({bare} MB without pip and setuptools)" in text


def test_no_help_text_doc_or_source_cites_a_specification_the_repository_lacks() -> None:
    """Help texts, locale files, the config schema, docs and sources cite ADRs, never the brief's sections
    (the ADR index explains what the early records' citations referred to)."""
    root = README.parent
    citation = re.compile(r"SPEC ?§|SPEC\.md|§ ?\d")
    files = [README, root / "CONTEXT.md", *sorted((root / "docs").glob("*.md"))]
    for folder, pattern in (("ptc_plus", "*.py"), ("hookspecs", "*.py"), ("locale", "*.json"), ("tests", "*.py")):
        files += sorted((root / folder).rglob(pattern))
    files += sorted((root / "ptc_plus").rglob("*.schema.json"))
    cited = [str(f.relative_to(root)) for f in files if f != Path(__file__) and citation.search(f.read_text("utf-8"))]
    assert cited == []
