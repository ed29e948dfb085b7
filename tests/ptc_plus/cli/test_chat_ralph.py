"""``/ralph`` in ``ptc-plus chat`` at a real terminal (ADR 0117): the chat lends child agents on its own endpoint.

A fake OpenAI-compatible server on 127.0.0.1 plays every round's child (the scripted model, one reply per
request, in order): three rounds each write one workspace file with ``run_code`` and report, the third
``complete``; then a run ending ``blocked``; then one ending ``budget-limited`` after ``--max-rounds 2``.
The progress lines and ``/ralph``'s outcome are read off the terminal.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.ptc_plus.cli.test_chat import CLI, FakeOpenAI, chat_env, completion, run_code_call
from tests.ptc_plus.cli.test_chat_terminal import PROMPT, Terminal

pytestmark = pytest.mark.needs_bwrap


def _report(status: str, summary: str, **fields: Any) -> tuple[str, int, Any]:
    body = {"status": status, "summary": summary, "evidence": [], "next_steps": [], "blocker": "", **fields}
    return ("json", 200, completion(orjson.dumps(body).decode()))


def test_ralph_in_chat_completes_blocks_and_runs_out(tmp_path: Path, server: FakeOpenAI) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    for number in (1, 2, 3):
        code = f"await tools.write_file(path='part{number}.txt', content='part {number}')"
        server.replies.append(("json", 200, completion(None, [run_code_call(code, f"call_{number}")])))
        if number < 3:
            server.replies.append(_report("continue", f"wrote part {number}", next_steps=[f"part {number + 1}"]))
        else:
            evidence = ["part1.txt, part2.txt and part3.txt exist"]
            server.replies.append(_report("complete", "all three parts written", evidence=evidence))
    server.replies.append(_report("blocked", "cannot deploy", blocker="deploy.key is not in the workspace"))
    server.replies.append(_report("continue", "polished once", next_steps=["polish again"]))
    server.replies.append(_report("continue", "polished twice", next_steps=["polish again"]))
    env = chat_env(TERM="xterm", PROMPT_TOOLKIT_NO_CPR="1", HOME=str(tmp_path))
    argv = [CLI, "chat", "--workspace", str(workspace), "--base-url", server.url, "--model", "m", "--tools", "demo"]
    terminal = Terminal(argv, env)
    try:
        at = terminal.expect(PROMPT)
        terminal.type("/ralph write three parts of the report\r")
        at = terminal.expect("started: up to 256 rounds", after=at)
        for number in (1, 2, 3):
            at = terminal.expect(f"ralph round {number}: started", after=at)
            at = terminal.expect(f"ralph round {number}: done", after=at)
        at = terminal.expect("ended: complete", after=at)
        terminal.type("/ralph\r")
        at = terminal.expect("reports the objective complete after 3 rounds", after=at)
        at = terminal.expect("a claim to check, not proof", after=at)
        at = terminal.expect("part1.txt, part2.txt and part3.txt exist", after=at)
        terminal.type("/ralph deploy the site\r")
        at = terminal.expect("ended: blocked", after=at)
        terminal.type("/ralph polish the prose --max-rounds 2\r")
        at = terminal.expect("ended: budget-limited", after=at)
        terminal.type("/ralph\r")
        at = terminal.expect("is blocked after 1 rounds", after=at)
        at = terminal.expect("Blocked by: deploy.key is not in the workspace", after=at)
        at = terminal.expect("stopped at its budget after 2 rounds: it is not done", after=at)
        terminal.type("/exit\r")
        assert terminal.wait() == 0
    finally:
        terminal.kill()
    assert [(workspace / f"part{n}.txt").read_text() for n in (1, 2, 3)] == ["part 1", "part 2", "part 3"]
    # Every round was a fresh child: its first request carried its own round prompt and no earlier conversation.
    firsts = [r for r in server.requests if "This is round" in str(r["messages"][-1].get("content"))]
    assert len(firsts) == 6
    for request in firsts:
        assert [m["role"] for m in request["messages"] if m["role"] != "system"] == ["user"]
