"""Two sessions' programs running at once in one host (issue 26, ADR 0089).

Session A's program blocks in a host tool (``hold``, exclusive) with a second
nested call (``echo``) queued behind it; while it is blocked, session B — an
independent session or A's own child — runs ``return 1`` under the same outer
call id and settles. The outer id is the same because the model gives both the
same id (``c1``), or because the host numbers both sessions' first call alike
(``call-<turn>-<step>-<i>``, ``direct-<n>``). B must settle without waiting for
A's tool, A's queued call must still run (not be abandoned), and the
statistics must count exactly the tools each family called.

Everything is ordered by events, never by sleeps: A is released once B's work
ended — or, when B's settlement wrongly closed A's lane, once A's queued call
was abandoned, so a regression fails instead of hanging.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

import ptc_plus.plugin
from hookspecs import Concurrency, JSONObject, JSONValue, ToolContext, tool
from hookspecs.reference import AssistantTurn, ReferenceHost, RequestedCall, ScriptedModel, Session
from ptc_plus.statistics import CapabilityStats, StoreView, workspace_store
from tests.scaffolding import isolate_from_the_machine

PROGRAM_A = "import asyncio\nreturn await asyncio.gather(tools.hold(), tools.echo(text='a'))"
PROGRAM_B = "return 1"


class Gates:
    """A's ``hold`` tool: tells when it is entered, returns when released."""

    def __init__(self) -> None:
        self.entered = asyncio.Event()
        self.release = asyncio.Event()


@pytest.fixture(autouse=True)
def xdg(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    home = isolate_from_the_machine(monkeypatch, tmp_path)
    config = home / "ptc-plus" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('version = 1\n\n[runtime]\npolicy = "danger-full-access"\n', encoding="utf-8")


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "workspace"
    (root / ".ptc-plus").mkdir(parents=True)
    (root / ".ptc-plus" / "config.toml").write_text(
        "version = 1\n\n[management]\nenabled = true\nbudget_tokens = 0\nbaseline = []\n\n"
        "[statistics]\nenabled = true\n",
        encoding="utf-8",
    )
    return root


@pytest_asyncio.fixture
async def gated_host(workspace: Path, tmp_path: Path) -> AsyncIterator[tuple[ReferenceHost, Gates]]:
    gates = Gates()

    @tool("hold", description="Waits until released.", concurrency=Concurrency.EXCLUSIVE)
    async def hold(arguments: JSONObject, context: ToolContext) -> JSONValue:
        gates.entered.set()
        await gates.release.wait()
        return "held"

    @tool(
        "echo",
        description="Echo the text back.",
        input_schema={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    )
    async def echo(arguments: JSONObject, context: ToolContext) -> JSONValue:
        return arguments["text"]

    host = ReferenceHost(
        workspace=workspace,
        state_dir=tmp_path / "state",
        tools=[hold, echo],
        plugins=[ptc_plus.plugin],
        load_entry_points=False,
    )
    try:
        yield host, gates
    finally:
        gates.release.set()
        await host.aclose()


def turn_model(code: str, call_id: str) -> ScriptedModel:
    call = RequestedCall(tool="run_code", arguments={"description": "test", "code": code}, call_id=call_id)
    return ScriptedModel([AssistantTurn(tool_calls=(call,)), AssistantTurn(text="done")])


async def work(session: Session, code: str, entry: str) -> Any:
    """Run ``code`` as the session's model's program (``entry`` ``turn``) or as a direct call; its result."""
    if entry == "direct":
        result = await session.call_tool("run_code", {"description": "test", "code": code})
        return result.value
    await session.run_turn("go")
    settled = [e.data for e in session.log.events if e.type == "tool-settled" and e.data["top_level"]]
    return settled[-1]["result"]["value"]


def stats(host: ReferenceHost, session: Session, view: StoreView, identity: str) -> CapabilityStats:
    state = ptc_plus.plugin.controller(host.services).session(session.agent)
    assert state is not None and state.environment is not None
    entry = state.environment.plan.entry(identity)
    assert entry is not None, identity
    return view.stats(identity, entry.revision, window=100, min_samples=1)


@pytest.mark.asyncio
@pytest.mark.parametrize("relation", ["independent", "child"])
@pytest.mark.parametrize("entry", ["model-given-id", "host-assigned-id", "direct"])
async def test_a_session_settling_never_touches_another_sessions_program(
    gated_host: tuple[ReferenceHost, Gates], monkeypatch: pytest.MonkeyPatch, relation: str, entry: str
) -> None:
    host, gates = gated_host
    given = "c1" if entry == "model-given-id" else ""
    mode = "direct" if entry == "direct" else "turn"
    a = await host.start_session(model=turn_model(PROGRAM_A, given))
    if relation == "child":
        b = await a.fork(title="child")
        b.model = turn_model(PROGRAM_B, given)
    else:
        b = await host.start_session(model=turn_model(PROGRAM_B, given))

    # A's queued ``echo`` abandoned is the regression: seen the moment A's log gets it.
    abandoned = asyncio.Event()
    append = a.append

    def watching(type_: str, data: dict[str, Any], **options: Any) -> Any:
        if type_ == "tool-abandoned":
            abandoned.set()
        return append(type_, data, **options)  # durable=, defer= (group commit, ADR 0114) passed through

    monkeypatch.setattr(a, "append", watching)

    a_work = asyncio.ensure_future(work(a, PROGRAM_A, mode))
    await gates.entered.wait()  # A's program is blocked in ``hold``, ``echo`` queued behind it
    b_work = asyncio.ensure_future(work(b, PROGRAM_B, mode))
    regression = asyncio.ensure_future(abandoned.wait())
    done, _ = await asyncio.wait([b_work, regression], return_when=asyncio.FIRST_COMPLETED)
    regression.cancel()
    gates.release.set()
    a_value, b_value = await asyncio.gather(a_work, b_work)

    assert b_work in done and not abandoned.is_set(), "B's settlement waited for or closed A's nested lane"
    assert b_value["value"] == 1, b_value
    assert a_value["value"] == ["held", "a"], a_value
    ids = [e.data["call_id"] for s in (a, b) for e in s.log.events if e.type == "tool-started"]
    if entry != "model-given-id":
        assert len(ids) == len(set(ids)), ids  # every id the host handed out is its own

    view = workspace_store(host.workspace).read()
    families = 2 if relation == "independent" else 1
    assert view.status == "ok" and view.families() == families
    for identity in ("host:hold", "host:echo"):
        assert stats(host, a, view, identity) == CapabilityStats(
            available=families, used=1, coverage=1 / families, sufficient=True
        ), identity
