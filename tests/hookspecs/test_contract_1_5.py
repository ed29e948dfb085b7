"""Contract 1.5: the optional child-agents service (ADR 0116), and the reference host's implementation."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from hookspecs import CONTRACT_VERSION, ChildAgents, ChildRequest, child_agents_of, specs
from hookspecs.reference import AssistantTurn, ChildProvider, HostError, ModelRequest, ReferenceHost


def test_the_version_says_1_5() -> None:
    assert tuple(int(p) for p in CONTRACT_VERSION.split(".")) >= (1, 5)
    assert CONTRACT_VERSION == specs.CONTRACT_VERSION


def test_a_host_without_the_service_lends_none() -> None:
    class Older:  # a 1.4 host's services: no such attribute
        pass

    assert child_agents_of(Older()) is None
    assert child_agents_of(type("Declined", (), {"child_agents": None})()) is None


class _Model:
    route = "contract-child"

    def __init__(self, seen: list[ModelRequest], started: asyncio.Event) -> None:
        self._seen, self._started = seen, started

    async def complete(self, request: ModelRequest) -> AssistantTurn:
        self._seen.append(request)
        prompt = str(request.messages[-1]["content"])
        if prompt.startswith("fail"):
            raise HostError("HOST-0301", count=0)
        if prompt.startswith("hang"):
            self._started.set()
            await asyncio.Event().wait()
        return AssistantTurn(text="answer: " + prompt.split("\n\n")[0])


@pytest.mark.asyncio
async def test_the_reference_host_runs_fresh_children_in_the_family(tmp_path: Path) -> None:
    seen: list[ModelRequest] = []
    started = asyncio.Event()
    provider = ChildProvider(make=lambda request: _Model(seen, started), structured=False)
    async with ReferenceHost(workspace=tmp_path, load_entry_points=False, child_providers={"": provider}) as host:
        service = child_agents_of(host.services)
        assert isinstance(service, ChildAgents) and service.providers() == [""]
        assert not service.structured("") and not service.structured("other")
        parent = await host.start_session()
        result = await service.run(ChildRequest(parent=parent.agent, prompt="hello", label="greeter"))
        assert result.ok and result.text == "answer: hello" and result.steps == 1
        child = host.session(result.session_id)
        assert child.agent.family_id == parent.agent.family_id
        assert child.agent.parent_session_id == parent.agent.session_id
        assert [m["role"] for m in seen[-1].messages] == ["user"]  # nothing of the parent's conversation
        failed = await service.run(ChildRequest(parent=parent.agent, prompt="fail now"))
        assert not failed.ok and "HOST-0301" in failed.error  # an ordinary failure: a result, no exception
        with pytest.raises(KeyError):
            await service.run(ChildRequest(parent=parent.agent, prompt="x", provider="nowhere"))
        running = asyncio.ensure_future(service.run(ChildRequest(parent=parent.agent, prompt="hang")))
        await started.wait()
        assert host.children is not None and host.children.live() == 1
        running.cancel()
        with pytest.raises(asyncio.CancelledError):
            await running
        assert host.children.live() == 0  # reaped before the cancellation returned


@pytest.mark.asyncio
async def test_a_child_keeps_its_own_step_cap(tmp_path: Path) -> None:
    class Looping:
        route = "looping"

        async def complete(self, request: ModelRequest) -> AssistantTurn:
            from hookspecs.reference import RequestedCall

            return AssistantTurn(tool_calls=(RequestedCall(tool="missing", arguments={}),))

    provider = ChildProvider(make=lambda request: Looping())
    async with ReferenceHost(workspace=tmp_path, load_entry_points=False, child_providers={"": provider}) as host:
        parent = await host.start_session()
        assert host.children is not None
        result = await host.children.run(ChildRequest(parent=parent.agent, prompt="loop", max_steps=2))
        assert not result.ok and "2 steps" in result.error
