"""``ptc-plus chat`` wraps its own prose to the terminal's width at word boundaries (CJK-aware), never code.

At a real pseudo-terminal of 40 (English) and 30 (Chinese) columns: the welcome line, ``/help`` and a Ralph run's
start line and progress are printed with no line wider than the terminal, and every word of them whole (the text,
its whitespace collapsed, is what the message says). The wrapping rule itself is checked on its own below.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

import orjson
import pytest

from ptc_plus.cli.wrap import columns, terminal_width, wrap
from ptc_plus.i18n import message
from tests.ptc_plus.cli.test_chat import CLI, FakeOpenAI, chat_env, completion
from tests.ptc_plus.cli.test_chat_terminal import PROMPT, Terminal


def _printed(seen: str) -> list[str]:
    """The lines the chat printed: not the prompt's (prompt_toolkit's redraws, the user's own typing)."""
    return [line for line in seen.split("\n") if PROMPT not in line]


def _flat(text: str) -> str:
    return " ".join(text.split())


def _blocked() -> tuple[str, int, object]:
    body = {"status": "blocked", "summary": "cannot deploy", "evidence": [], "next_steps": []}
    return ("json", 200, completion(orjson.dumps(body | {"blocker": "deploy.key is not in the workspace"}).decode()))


def _typed_at(columns: int, argv: list[str], env: dict[str, str], said: list[tuple[str, tuple[str, ...]]]) -> str:
    """What the chat printed at a terminal ``columns`` wide, typed at: each line, then the texts it must show."""
    terminal = Terminal(argv, env | {"COLUMNS": str(columns)}, columns=columns)
    try:
        at = terminal.expect(PROMPT)
        for line, answers in said:
            terminal.type(line + "\r")
            for answer in answers:
                at = terminal.expect(answer, after=at)
        terminal.type("/exit\r")
        assert terminal.wait() == 0
    finally:
        terminal.kill()
    return terminal.seen


@pytest.mark.needs_bwrap
def test_a_narrow_terminal_gets_whole_words_and_no_line_wider_than_itself(tmp_path: Path, server: FakeOpenAI) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    server.replies.append(_blocked())  # the one Ralph round: its child's report
    env = chat_env(TERM="xterm", PROMPT_TOOLKIT_NO_CPR="1", HOME=str(tmp_path))
    argv = [CLI, "chat", "--workspace", str(workspace), "--base-url", server.url, "--model", "m", "--tools", "demo"]
    seen = _typed_at(40, argv, env, [("/help", ("/exit", PROMPT)), ("/ralph deploy the site", ("ended:", "blocked"))])
    printed = _printed(seen)
    assert [line for line in printed if columns(line) > 40] == []
    flat = _flat(seen)
    # Each message whole: wrapping replaced spaces with line breaks, never cut inside a word.
    started = re.escape(_flat(message("ptc.ralph.started", run="RUN", rounds=256))).replace("RUN", r"ralph-\S+")
    assert re.search(started, flat), seen
    assert _flat(message("ptc.ralph.cmd.summary")) in flat
    assert _flat(message("cli.chat.welcome", session="SID")).split("SID")[1].strip() in flat
    assert max(columns(line) for line in printed) > 30  # the lines were filled, not cut short


@pytest.mark.needs_bwrap
def test_chinese_prose_wraps_by_columns_between_characters(tmp_path: Path, server: FakeOpenAI) -> None:
    env = chat_env(TERM="xterm", PROMPT_TOOLKIT_NO_CPR="1", HOME=str(tmp_path), PTC_LOCALE="zh")
    argv = [CLI, "chat", "--workspace", str(tmp_path), "--base-url", server.url, "--model", "m"]
    seen = _typed_at(30, argv, env, [("/help", ("/exit", PROMPT))])
    assert [line for line in _printed(seen) if columns(line) > 30] == []
    summary = message("ptc.ralph.cmd.summary", "zh")
    assert columns(summary) > 30  # it had to wrap
    assert "".join(summary.split()) in "".join(seen.split())


def test_the_rule() -> None:
    line = "  Ralph ralph-1 started: up to 256 rounds of fresh child agents; /ralph shows its state."
    wrapped = wrap(line, 30).split("\n")
    assert all(columns(part) <= 30 for part in wrapped) and all(part.startswith("  ") for part in wrapped)
    assert _flat("\n".join(wrapped)) == _flat(line)
    assert wrap("a " + "x" * 50 + " b", 20).split("\n") == ["a", "x" * 50, "b"]  # a long word stays whole
    chinese = "最多五轮全新的子智能体，显示它的状态。"
    parts = wrap(chinese, 10).split("\n")
    assert all(columns(part) <= 10 for part in parts) and "".join(parts) == chinese
    assert not any(part.startswith(("，", "。")) for part in parts)  # closing punctuation never starts a line
    assert columns("中a") == 3 and columns("\x1b[36mab\x1b[0m") == 2
    code = "```\n" + "x = 1  # " + "word " * 20 + "\n```"
    assert wrap(code, 20) == code
    data = '{"text": "' + "word " * 20 + '"}'
    assert wrap(data, 20) == data and wrap("  " + data, 20) == "  " + data
    assert wrap(line, None) == line
    assert terminal_width(io.StringIO()) is None  # not a terminal: lines go out as they are
