"""Family settlement in the reference host (contract 1.2, ADR 0065): when a family is provably at rest."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import orjson
import pytest

from hookspecs import FamilySettlement, HostServices, JSONObject, JSONValue, ToolContext, hookimpl, tool
from hookspecs.reference import AssistantTurn, ModelRequest, ReferenceHost, RequestedCall, ScriptedModel, Session


class Settlements:
    """Records every settlement the host announces."""

    def __init__(self) -> None:
        self.seen: list[FamilySettlement] = []

    @hookimpl
    def agent_host_family_settled(self, family: FamilySettlement, services: HostServices) -> None:
        self.seen.append(family)


class GatedModel(ScriptedModel):
    """A scripted model that says when a request arrived and answers only once the gate opens."""

    def __init__(self, turns: Sequence[AssistantTurn], gate: asyncio.Event) -> None:
        super().__init__(turns)
        self.gate = gate
        self.asked = asyncio.Event()

    async def complete(self, request: ModelRequest) -> AssistantTurn:
        self.asked.set()
        await self.gate.wait()
        return await super().complete(request)


def said(*texts: str) -> ScriptedModel:
    return ScriptedModel([AssistantTurn(text=t) for t in texts])


def settled_events(host: ReferenceHost, session_id: str) -> list[dict[str, Any]]:
    lines = host.log_path(session_id).read_bytes().splitlines()
    return [e["data"] for e in map(orjson.loads, lines) if e["type"] == "family-settled"]


@pytest.mark.asyncio
async def test_a_child_still_running_when_the_root_settles_defers_the_settlement(
    make_reference_host: Callable[..., ReferenceHost],
) -> None:
    """The root's turn settles while a child it delegated to is mid-turn: the family settles when the child does."""
    settlements = Settlements()
    gate = asyncio.Event()
    roots: list[Session] = []
    children: list[asyncio.Task[Any]] = []

    @tool("delegate", description="Start a helper agent and return at once.")
    async def delegate(arguments: JSONObject, context: ToolContext) -> JSONValue:
        child = await roots[0].fork(title="helper")
        model = GatedModel([AssistantTurn(text="helped")], gate)
        child.model = model
        children.append(asyncio.create_task(child.run_turn("help")))
        await model.asked.wait()  # the child's turn is under way before the root's can settle
        return "delegated"

    root_model = ScriptedModel(
        [AssistantTurn(tool_calls=(RequestedCall(call_id="d", tool="delegate", arguments={}),)), AssistantTurn()]
    )
    async with make_reference_host(plugins=[settlements], tools=[delegate]) as host:
        root = await host.start_session(model=root_model)
        roots.append(root)
        await root.run_turn("go")
        assert settlements.seen == [] and host.families.live(root.agent.family_id)
        assert host.families.survey(root.agent.family_id) is None
        gate.set()
        await children[0]
        (family,) = settlements.seen
        assert not host.families.live(root.agent.family_id)
    assert family.generation == 1 and family.family_id == root.agent.session_id
    assert [(m.agent.parent_session_id, m.started) for m in family.members] == [
        (None, True),
        (root.agent.session_id, True),
    ]


@pytest.mark.asyncio
async def test_concurrent_turns_of_one_family_settle_once(make_reference_host: Callable[..., ReferenceHost]) -> None:
    settlements = Settlements()
    gate = asyncio.Event()
    root_model, child_model = GatedModel([AssistantTurn(text="r")], gate), GatedModel([AssistantTurn(text="c")], gate)
    async with make_reference_host(plugins=[settlements]) as host:
        root = await host.start_session(model=root_model)
        child = await root.fork()
        child.model = child_model
        turns = asyncio.gather(root.run_turn("a"), child.run_turn("b"))
        await asyncio.wait_for(asyncio.gather(root_model.asked.wait(), child_model.asked.wait()), timeout=120)
        assert settlements.seen == []
        gate.set()
        await turns
    (family,) = settlements.seen
    assert family.agents == (root.agent, child.agent) and all(m.started for m in family.members)


@pytest.mark.asyncio
async def test_a_session_created_but_never_started_never_settles(
    make_reference_host: Callable[..., ReferenceHost],
) -> None:
    settlements = Settlements()
    async with make_reference_host(plugins=[settlements]) as host:
        root = await host.start_session(model=said())
        child = await root.fork()
        root.command("/help")
        root.compact()
        assert host.families.survey(root.agent.family_id) is None
    assert settlements.seen == []
    assert settled_events(host, root.agent.session_id) == settled_events(host, child.agent.session_id) == []


@pytest.mark.asyncio
async def test_a_direct_call_is_work_that_settles(make_reference_host: Callable[..., ReferenceHost]) -> None:
    settlements = Settlements()

    @tool("ping", description="Answer pong.")
    async def ping(arguments: JSONObject, context: ToolContext) -> JSONValue:
        return "pong"

    async with make_reference_host(plugins=[settlements], tools=[ping]) as host:
        root = await host.start_session()
        assert (await root.call_tool("ping", {})).value == "pong"
    (family,) = settlements.seen
    assert family.started and family.generation == 1


@pytest.mark.asyncio
async def test_a_resumed_family_settles_again_as_a_revision(
    make_reference_host: Callable[..., ReferenceHost], tmp_path: Path
) -> None:
    """Same family id, a higher generation, every member listed — also those this host never loaded."""
    elsewhere = tmp_path / "other-workspace"
    elsewhere.mkdir()
    first = Settlements()
    async with make_reference_host(plugins=[first]) as host:
        root = await host.start_session(model=said("one"))
        await root.run_turn("first")
        child = await root.fork(workspace=elsewhere)
        child.model = said("child")
        await child.run_turn("work there")
    assert [f.generation for f in first.seen] == [1, 2]
    assert [m.workspace for m in first.seen[-1].members] == [host.workspace, elsewhere.resolve()]

    second = Settlements()
    async with make_reference_host(plugins=[second]) as host:
        resumed = await host.resume_session(root.agent.session_id, model=said("again"))
        assert second.seen == []  # a resume alone is not work
        await resumed.run_turn("second")
        assert host.loaded(child.agent.session_id) is None
    (revision,) = second.seen
    assert revision.family_id == first.seen[0].family_id == root.agent.session_id
    assert revision.generation == 3
    assert revision.members == first.seen[-1].members  # the child, read from its log, works elsewhere
    assert [e["generation"] for e in settled_events(host, root.agent.session_id)] == [1, 2, 3]


@pytest.mark.asyncio
async def test_a_child_resumed_alone_continues_the_generations(
    make_reference_host: Callable[..., ReferenceHost],
) -> None:
    """Settlements persisted in a child's log (its root not open) count for the next generation too."""
    async with make_reference_host() as host:
        root = await host.start_session(model=said("one"))
        child = await root.fork()
        await root.run_turn("first")  # generation 1, in the root's log
    settlements = Settlements()
    async with make_reference_host(plugins=[settlements]) as host:
        resumed_child = await host.resume_session(child.agent.session_id, model=said("two"))
        await resumed_child.run_turn("second")  # generation 2, in the child's log
    async with make_reference_host(plugins=[settlements]) as host:
        resumed_root = await host.resume_session(root.agent.session_id, model=said("three"))
        await resumed_root.run_turn("third")
    assert [(f.generation, f.root) for f in settlements.seen] == [(2, root.agent), (3, root.agent)]
    assert [e["generation"] for e in settled_events(host, child.agent.session_id)] == [2]
    assert [e["generation"] for e in settled_events(host, root.agent.session_id)] == [1, 3]


@pytest.mark.asyncio
async def test_a_family_open_in_another_host_is_not_settled(
    make_reference_host: Callable[..., ReferenceHost],
) -> None:
    """A member open elsewhere may be running there: no provable boundary, so no settlement."""
    async with make_reference_host() as host:
        root = await host.start_session(model=said("one"))
        child = await root.fork()
    settlements = Settlements()
    async with make_reference_host() as holder:
        await holder.resume_session(root.agent.session_id)
        async with make_reference_host(plugins=[settlements]) as host:
            resumed_child = await host.resume_session(child.agent.session_id, model=said("a", "b"))
            await resumed_child.run_turn("while the root is open elsewhere")
            assert settlements.seen == []
            await holder.aclose()
            await resumed_child.run_turn("after it closed")
    (family,) = settlements.seen
    assert family.generation == 1 and family.agents == (root.agent, child.agent)


@pytest.mark.asyncio
async def test_an_unreadable_member_withholds_the_settlement(make_reference_host: Callable[..., ReferenceHost]) -> None:
    async with make_reference_host() as host:
        root = await host.start_session(model=said("one"))
        child = await root.fork()
    host.log_path(child.agent.session_id).unlink()
    settlements = Settlements()
    async with make_reference_host(plugins=[settlements]) as host:
        resumed = await host.resume_session(root.agent.session_id, model=said("two"))
        await resumed.run_turn("go")
        assert any(r.startswith("agent_host_family_settled: HOST-0103") for r in host.facade.reports)
    assert settlements.seen == [] and settled_events(host, root.agent.session_id) == []
