"""Fixtures for workflow tests: a reference host lending child agents whose scripted models follow their prompts.

Hosts load exactly ``ptc_plus.plugin`` and the demo tools, under the default
policy (scripts run confined, ``read-only``, in bubblewrap). Each child's
model is a :class:`ChildModel`: its answer is decided by its one prompt, so a
script chooses how each child ends (``echo``, ``fail``, ``json``, ``hang``,
``write``), and :class:`Board` records what the children saw and did.
"""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import attrs
import orjson
import pytest
import pytest_asyncio

import ptc_plus.plugin
from hookspecs import JSONValue, ToolResult
from hookspecs.children import ChildRequest
from hookspecs.reference import (
    AssistantTurn,
    HostError,
    ModelRequest,
    ReferenceHost,
    RequestedCall,
    RequestUsage,
    ScriptedModel,
    Session,
)
from hookspecs.reference.children import ChildProvider
from hookspecs.reference.demo_tools import demo_tool_definitions
from tests.scaffolding import isolate_from_the_machine

HostFactory = Callable[..., Awaitable[ReferenceHost]]


@attrs.define
class Board:
    """What the children of a test did: prompts seen, message counts, hangs started and cancelled."""

    prompts: list[str] = attrs.field(factory=list)
    first_requests: list[ModelRequest] = attrs.field(factory=list)
    hanging: int = 0
    cancelled: int = 0
    hang_started: asyncio.Event = attrs.field(factory=asyncio.Event)
    pids: list[int] = attrs.field(factory=list)
    ralph_rounds: list[int] = attrs.field(factory=list)


class ChildModel:
    """One child's model. Its prompt (the child's only user message) says how it ends:

    ``echo TEXT`` answers TEXT; ``fail ...`` makes the route fail (an ordinary child failure);
    ``json TEXT`` answers TEXT as is (for schemas); ``hang`` waits until cancelled; ``after-hang``
    answers once a ``hang`` child is running;
    ``write PATH TEXT`` writes the workspace file PATH with TEXT (a ``run_code`` program calling the
    demo ``write_file``: the child's own tools, under the host's guards), then answers ``wrote PATH``;
    anything else answers ``done: <prompt>``.
    """

    route = "scripted-child"

    def __init__(self, board: Board) -> None:
        self._board = board
        self._steps = 0
        self.usage: list[RequestUsage] = []
        """What the route reports per request (100 tokens each), as an OpenAI-compatible route does."""

    async def complete(self, request: ModelRequest) -> AssistantTurn:
        self._steps += 1
        self.usage.append(RequestUsage(cached_input=None, uncached_input=None, output=40, input=60))
        prompt = next(m["content"] for m in reversed(request.messages) if m["role"] == "user")
        if self._steps == 1:
            self._board.prompts.append(prompt)
            self._board.first_requests.append(request)
        if prompt.startswith(RALPH_PROMPT):
            return self._ralph(prompt)
        word, _, rest = prompt.partition(" ")
        head = rest.split("\n\n")[0]
        if word == "fail":
            raise HostError("HOST-0301", count=0)
        if word == "hang":
            self._board.hanging += 1
            self._board.hang_started.set()
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                self._board.cancelled += 1
                raise
        if word == "after-hang":  # answers once a hanging sibling is running (ordering, not time)
            await self._board.hang_started.wait()
            return AssistantTurn(text="after")
        if word == "json":
            return AssistantTurn(text=head)
        if word == "echo":
            return AssistantTurn(text=head)
        if word == "write":
            name, _, text = head.partition(" ")
            if self._steps == 1:
                code = f"await tools.write_file(path={name!r}, content={text!r})"
                call = RequestedCall(tool="run_code", arguments={"description": "write", "code": code})
                return AssistantTurn(tool_calls=(call,))
            return AssistantTurn(text=f"wrote {name}")
        return AssistantTurn(text=f"done: {prompt}")

    def _ralph(self, prompt: str) -> AssistantTurn:
        """A Ralph round: the objective says how the loop goes (see :func:`ralph_report`)."""
        objective = prompt.split("unchangeable): ", 1)[1].split("\n\n", 1)[0]
        found = re.search(r"This is round (\d+)", prompt)
        assert found is not None
        number = int(found.group(1))
        if objective.startswith("write three parts") and self._steps == 1:
            code = f"await tools.write_file(path='part{number}.txt', content='part {number}')"
            call = RequestedCall(tool="run_code", arguments={"description": "write", "code": code})
            return AssistantTurn(tool_calls=(call,))
        return AssistantTurn(text=orjson.dumps(ralph_report(objective, number, self._board)).decode())


RALPH_PROMPT = "You are one round of a fresh-context loop."


def ralph_report(objective: str, number: int, board: Board) -> dict[str, Any]:
    """``write three parts``: rounds 1-3 each write ``part<n>.txt``; round 3 reports complete. ``blocked``: a
    concrete blocker. ``vague``: a blocker too short to be concrete. ``forever``: always continue."""
    board.ralph_rounds.append(number)
    empty: dict[str, Any] = {"evidence": [], "next_steps": [], "blocker": ""}
    if objective.startswith("write three parts"):
        if number < 3:
            steps = [f"write part {number + 1}"]
            return {**empty, "status": "continue", "summary": f"wrote part {number}", "next_steps": steps}
        evidence = ["part1.txt", "part2.txt", "part3.txt"]
        return {**empty, "status": "complete", "summary": "all three parts written", "evidence": evidence}
    if objective.startswith("blocked"):
        blocker = "the credentials file deploy.key is not in the workspace"
        return {**empty, "status": "blocked", "summary": "cannot go on", "blocker": blocker}
    if objective.startswith("vague"):
        return {**empty, "status": "blocked", "summary": "hm", "blocker": "no"}
    return {**empty, "status": "continue", "summary": f"round {number}", "next_steps": ["keep going"]}


def providers(board: Board, *, structured: bool = True) -> dict[str, ChildProvider]:
    def make(request: ChildRequest) -> ChildModel:
        return ChildModel(board)

    return {"": ChildProvider(make=make, structured=structured), "plain": ChildProvider(make=make, structured=False)}


@pytest.fixture(autouse=True)
def isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    isolate_from_the_machine(monkeypatch, tmp_path)


@pytest.fixture
def board() -> Board:
    return Board()


@pytest_asyncio.fixture
async def open_host(workspace: Path, tmp_path: Path, board: Board) -> AsyncIterator[HostFactory]:
    """``await open_host(**kwargs)``: a reference host lending children (``child_providers=None``: none)."""
    hosts: list[ReferenceHost] = []

    async def factory(**kwargs: Any) -> ReferenceHost:
        kwargs.setdefault("workspace", workspace)
        kwargs.setdefault("state_dir", tmp_path / "state")
        kwargs.setdefault("tools", demo_tool_definitions(workspace))
        kwargs.setdefault("plugins", [ptc_plus.plugin])
        kwargs.setdefault("load_entry_points", False)
        kwargs.setdefault("child_providers", providers(board))
        host = ReferenceHost(**kwargs)
        hosts.append(host)
        return host

    yield factory
    for host in hosts:
        await host.aclose()


def workflow_turns(script: str, *, args: JSONValue = None, final: str = "done", **extra: Any) -> ScriptedModel:
    """A parent model that calls ``run_workflow`` with ``script`` once, then answers ``final``."""
    arguments: dict[str, Any] = {"description": "test", "script": script, **extra}
    if args is not None:
        arguments["args"] = args
    call = RequestedCall(tool="run_workflow", arguments=arguments)
    return ScriptedModel([AssistantTurn(tool_calls=(call,)), AssistantTurn(text=final)])


async def run_script(session: Session, script: str, **arguments: Any) -> ToolResult:
    """``run_workflow`` called directly on ``session`` (through the host's whole dispatch pipeline)."""
    return await session.call_tool("run_workflow", {"description": "test", "script": script, **arguments})


def report(result: ToolResult) -> dict[str, Any]:
    """The run's report, from a completed value or a failed result's data."""
    if result.ok:
        assert isinstance(result.value, dict)
        return dict(result.value)
    assert result.error is not None, result
    data = dict(result.error.data)
    assert "stop_reason" in data, f"not a settled run: {result.error.code} {result.error.message}"
    return data


def run_processes() -> list[str]:
    """Command lines of this test process's descendants that are runs (bubblewrap or a runtime worker)."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            parents[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
    own, found = os.getpid(), []
    for pid in parents:
        ancestor = parents.get(pid)
        while ancestor not in (None, 0, 1, own):
            ancestor = parents.get(ancestor)
        if ancestor == own:
            try:
                line = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if "bwrap" in line or "ptc_plus" in line or "worker" in line:
                found.append(line)
    return found


def decoded(text: str) -> Any:
    return orjson.loads(text)


def deploy(host: ReferenceHost, **caps: Any) -> None:
    """Set the deployment's workflow caps of ``host`` (what its user file would), e.g. more concurrency than
    this machine's default ``min(16, max(1, cores - 2))`` gives (1 on two cores)."""
    import ptc_plus.plugin
    from ptc_plus.workflow import WorkflowCaps

    desk = ptc_plus.plugin.desk(host.services)
    assert desk is not None, "the host lends no child agents"
    desk.caps = WorkflowCaps(**{"max_concurrent_agents": 4, **caps})
