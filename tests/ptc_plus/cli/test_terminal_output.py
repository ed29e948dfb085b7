"""What people read: tables and colour on a terminal (plain when piped or under NO_COLOR), plurals, plain words,
and a description and examples for every command in both locales."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import click
import pytest

from ptc_plus.cli import build_cli
from ptc_plus.i18n import load_catalog
from tests.cli_runner import CliRunner
from tests.terminal import terminal_output

CLI = str(Path(sys.executable).with_name("ptc-plus"))
ANSI = re.compile(r"\x1b\[[0-9;]*m")
OVERBUDGET = (
    'version = 1\n\n[management]\nenabled = true\nbudget_tokens = 10\n\n[capabilities."host:read_file"]\n'
    'disclosure = "full"\n'
)


def on_a_terminal(*args: str, **env: str) -> str:
    """Standard output of ``ptc-plus args`` written to a pseudo-terminal, as a user sees it."""
    return terminal_output([CLI, *args], {**os.environ, "TERM": "xterm-256color", **env})


def piped(*args: str, **env: str) -> str:
    done = subprocess.run([CLI, *args], capture_output=True, text=True, env={**os.environ, **env}, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def over_budget_workspace(tmp_path: Path) -> Path:
    config = tmp_path / "ws" / ".ptc-plus" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(OVERBUDGET, "utf-8")
    return tmp_path / "ws"


def test_plan_is_a_coloured_table_on_a_terminal(tmp_path: Path) -> None:
    workspace = str(over_budget_workspace(tmp_path))
    shown = on_a_terminal("capabilities", "plan", "--workspace", workspace)
    assert ANSI.search(shown)
    plain = ANSI.sub("", shown)
    assert re.search(r"^CAPABILITY +DISCLOSURE +WHY$", plain, re.MULTILINE)
    assert re.search(
        r"^host:read_file +full +explicit choice in the config \(over budget, kept in full\)$", plain, re.M
    )


def test_no_color_keeps_the_table_without_colour(tmp_path: Path) -> None:
    shown = on_a_terminal("capabilities", "plan", "--workspace", str(tmp_path), NO_COLOR="1")
    assert not ANSI.search(shown) and re.search(r"^CAPABILITY +DISCLOSURE +WHY$", shown, re.MULTILINE)


def test_config_show_is_a_table_on_a_terminal_with_or_without_colour(tmp_path: Path) -> None:
    header = r"^key +value +from$"
    assert re.search(header, ANSI.sub("", on_a_terminal("config", "show", "--workspace", str(tmp_path))), re.M)
    assert re.search(header, on_a_terminal("config", "show", "--workspace", str(tmp_path), NO_COLOR="1"), re.M)
    assert not re.search(header, piped("config", "show", "--workspace", str(tmp_path)), re.M)


def test_piped_output_is_plain_lines(tmp_path: Path) -> None:
    out = piped("capabilities", "plan", "--workspace", str(over_budget_workspace(tmp_path)))
    assert not ANSI.search(out) and "CAPABILITY" not in out
    assert "  host:read_file [full]: explicit choice in the config — over budget, kept in full\n" in out


@pytest.mark.parametrize(
    ("args", "header"),
    [
        (["capabilities", "search", "read a file"], r"^# +CAPABILITY +SCORE +COST \(o200k_base tokens\) +DESCRIPTION$"),
        (["plugins"], r"^PLUGIN +FROM +HOOKS \(agent_host_…\)$"),
    ],
)
def test_search_and_plugins_are_tables_on_a_terminal(tmp_path: Path, args: list[str], header: str) -> None:
    extra = ["--workspace", str(tmp_path)] if args[0] == "capabilities" else []
    shown = on_a_terminal(*args, *extra)
    assert ANSI.search(shown) and re.search(header, ANSI.sub("", shown), re.MULTILINE)
    assert not re.search(header, piped(*args, *extra), re.MULTILINE)


def test_gate_colours_its_decision(tmp_path: Path) -> None:
    enabled = on_a_terminal("gate", "--user", "alice", "--workspace", str(tmp_path))
    assert "\x1b[32mPTC enabled" in enabled
    disabled = on_a_terminal("gate", "--user", "alice", "--workspace", str(tmp_path), PTC_MODE="off")
    assert "\x1b[31mPTC disabled" in disabled


def tools_file(tmp_path: Path, count: int) -> Path:
    tools = [
        {"name": f"tool_{n}", "description": "A tool.", "inputSchema": {"type": "object", "properties": {}}}
        for n in range(count)
    ]
    path = tmp_path / f"tools{count}.json"
    path.write_text(json.dumps(tools), "utf-8")
    return path


@pytest.mark.parametrize(("count", "words"), [(1, "(1 tool, 0 shared type declarations)"), (2, "(2 tools, ")])
def test_sdk_cost_says_tool_or_tools(tmp_path: Path, run_cli: CliRunner, count: int, words: str) -> None:
    done = run_cli("sdk", "--tools", str(tools_file(tmp_path, count)))
    assert done.code == 0 and words in done.err and "1 tools" not in done.err


def test_sdk_cost_in_chinese(tmp_path: Path, run_cli: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PTC_LOCALE", "zh")
    done = run_cli("sdk", "--tools", str(tools_file(tmp_path, 1)))
    assert "（1 个工具，0 个共享类型声明）" in done.err


def test_english_messages_never_count_with_a_fixed_plural() -> None:
    english = load_catalog("en")
    counted = re.compile(r"\{\w+\} (tools|members|files|families|entries|capabilities|matches|declarations)\b")
    wrong = {key: text for key, text in english.items() if counted.search(text) and not key.endswith(".other")}
    assert wrong == {}


JARGON = ("overage", "absent", "no vote")


def test_plan_speaks_plainly_and_verbose_defines_the_terms(tmp_path: Path, run_cli: CliRunner) -> None:
    workspace = str(over_budget_workspace(tmp_path))
    done = run_cli("capabilities", "plan", "--workspace", workspace)
    assert done.code == 0
    assert not [word for word in JARGON if word in done.out.lower()]
    assert "not offered by the host" in done.out and "beyond the budget" in done.out
    verbose = run_cli("capabilities", "plan", "--workspace", workspace, "--verbose")
    assert all(word in verbose.out for word in JARGON) and "Terms: absent = " in verbose.out
    assert "    reason code explicit; cost " in verbose.out and "; overage (an explicit full beyond" in verbose.out


def _commands(group: click.Group, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    for name, command in group.commands.items():
        yield (*path, name)
        if isinstance(command, click.Group):
            yield from _commands(command, (*path, name))


COMMANDS = list(_commands(build_cli()))
CLICK_ENGLISH = ("Usage:", "Options:", "Commands:", "Show this message and exit.", "[default:", "[required]")


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("path", COMMANDS, ids=" ".join)
def test_every_command_has_a_description_and_examples(
    path: tuple[str, ...], lang: str, run_cli: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PTC_LOCALE", lang)
    done = run_cli(*path, "--help")
    assert done.code == 0
    description = done.out.split("\n\n")[1].strip()
    assert description and not description.startswith(("Options", "选项"))
    assert ("Examples" if lang == "en" else "示例") in done.out
    if lang == "zh":
        assert not [word for word in CLICK_ENGLISH if word in done.out], done.out
