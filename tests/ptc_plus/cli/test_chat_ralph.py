"""``/ralph`` in ``ptc-plus chat`` at a real terminal (ADR 0117): the chat lends child agents on its own endpoint.

A fake OpenAI-compatible server on 127.0.0.1 plays every round's child (the scripted model, one reply per
request, in order): three rounds each write one workspace file with ``run_code`` and report, the third
``complete``; then a run ending ``blocked``; then one ending ``budget-limited`` after ``--max-rounds 2``.
The progress lines and ``/ralph``'s outcome are read off the terminal.
"""

from __future__ import annotations

import threading
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


ROUND_MARK = "This is round"


def route_rounds(server: FakeOpenAI) -> list[tuple[Any, ...]]:
    """Serve Ralph rounds' requests from a queue of their own (returned, to fill), the parent's from
    ``server.replies``: a background Ralph run's children and the parent's next request race, and which queue a
    request takes from is decided by what it is (a round's prompt), never by which came first."""
    rounds: list[tuple[Any, ...]] = []
    lock = threading.Lock()
    base: Any = server.server.RequestHandlerClass

    class Routed(base):  # type: ignore[misc,valid-type]
        def do_POST(self) -> None:
            body = orjson.loads(self.rfile.read(int(self.headers["Content-Length"])))
            said = " ".join(str(m.get("content")) for m in body["messages"] if m["role"] == "user")
            with lock:
                server.requests.append(body)
                queue = rounds if ROUND_MARK in said else server.replies
                reply = queue.pop(0) if queue else ("json", 500, {"error": {"message": "no reply"}})
            if reply[0] == "json":
                self._json(reply[1], reply[2])
            else:
                self._stream(reply)

    server.server.RequestHandlerClass = Routed
    return rounds


def ralph_call(objective: str, call_id: str = "call_r") -> dict[str, Any]:
    """A streamed tool call of ``ralph`` (the chat's own model streams)."""
    arguments = orjson.dumps({"objective": objective}).decode()
    return {"index": 0, "id": call_id, "type": "function", "function": {"name": "ralph", "arguments": arguments}}


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


def test_the_ralph_tool_in_chat_only_when_the_user_asked(tmp_path: Path, server: FakeOpenAI) -> None:
    """Contract 1.6 in ``ptc-plus chat``: a turn without ``/ralph`` offers no ``ralph`` tool (the model's call is
    refused, nothing starts); a turn whose message holds ``/ralph`` offers it, and the run goes to its end."""
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    rounds = route_rounds(server)
    server.replies.append(("stream", [], [ralph_call("deploy the site", "call_a")]))
    server.replies.append(("stream", ["I may not start that."], None))
    server.replies.append(("stream", [], [ralph_call("deploy the site", "call_b")]))
    server.replies.append(("stream", ["Ralph is running."], None))
    rounds.append(_report("blocked", "cannot deploy", blocker="deploy.key is not in the workspace"))
    env = chat_env(TERM="xterm", PROMPT_TOOLKIT_NO_CPR="1", HOME=str(tmp_path))
    argv = [CLI, "chat", "--workspace", str(workspace), "--base-url", server.url, "--model", "m", "--tools", "demo"]
    terminal = Terminal(argv, env)
    try:
        at = terminal.expect(PROMPT)
        terminal.type("deploy the site with ralph\r")
        at = terminal.expect("I may not start that.", after=at)
        terminal.type("please /ralph deploy the site\r")
        at = terminal.expect("ralph round 1: started", after=at)
        at = terminal.expect("ended: blocked", after=at)
        terminal.type("/ralph\r")
        at = terminal.expect("Blocked by: deploy.key is not in the workspace", after=at)
        terminal.type("/exit\r")
        assert terminal.wait() == 0
    finally:
        terminal.kill()
    parents = [r for r in server.requests if ROUND_MARK not in str(r["messages"])]
    offered = [[t["function"]["name"] for t in r.get("tools", [])] for r in parents]
    assert "ralph" not in offered[0] and "ralph" not in offered[1]  # the turn that did not ask
    assert "ralph" in offered[2]  # the turn that did
    refused = [m for m in parents[1]["messages"] if m["role"] == "tool"]
    assert "unknown" in str(refused[-1]["content"]).lower()
    assert len([r for r in server.requests if ROUND_MARK in str(r["messages"])]) == 1  # one run, one round


def workflow_call(script: str, call_id: str = "call_w") -> dict[str, Any]:
    """A streamed tool call of ``run_workflow``."""
    arguments = orjson.dumps({"description": "greet", "script": script}).decode()
    return {"index": 0, "id": call_id, "type": "function", "function": {"name": "run_workflow", "arguments": arguments}}


def test_a_workflows_progress_is_live_in_chat_and_listed_by_workflow(tmp_path: Path, server: FakeOpenAI) -> None:
    """ADR 0116's progress in ``ptc-plus chat``: each child's start and end while the run goes, then ``/workflow``
    lists the session's run with its phase and children done and failed (one child answers, one fails)."""
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    script = (
        "phase('greet')\na = await agent('say hi', label='greeter')\n"
        "b = await agent('fail', label='failer')\nreturn [a, b]"
    )
    server.replies.append(("stream", [], [workflow_call(script)]))
    server.replies.append(("json", 200, completion("hi")))  # the greeter child (children are unstreamed)
    server.replies.append(("json", 500, {"error": {"message": "down"}}))  # the failer child: its route fails
    server.replies.append(("stream", ["Greeted."], None))
    env = chat_env(TERM="xterm", PROMPT_TOOLKIT_NO_CPR="1", HOME=str(tmp_path))
    argv = [CLI, "chat", "--workspace", str(workspace), "--base-url", server.url, "--model", "m", "--retries", "0"]
    terminal = Terminal(argv, env)
    try:
        at = terminal.expect(PROMPT)
        terminal.type("greet everyone\r")
        at = terminal.expect("phase: greet", after=at)
        at = terminal.expect("greeter: started", after=at)
        at = terminal.expect("greeter: done", after=at)
        at = terminal.expect("failer: started", after=at)
        at = terminal.expect("failer: failed", after=at)
        at = terminal.expect("Greeted.", after=at)
        terminal.type("/workflow\r")
        at = terminal.expect("Workflow runs of this session: 1", after=at)
        at = terminal.expect("completed, phase greet; children running 0, done 1, failed 1", after=at)
        terminal.type("/exit\r")
        assert terminal.wait() == 0
    finally:
        terminal.kill()
