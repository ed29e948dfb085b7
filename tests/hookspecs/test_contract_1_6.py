"""Contract 1.6 (ADR 0125): a turn's start reaches plugins with the user's text and the host's grants."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hookspecs import CONTRACT_VERSION, TurnStart, hookimpl, specs
from hookspecs.reference import AssistantTurn, ReferenceHost, ScriptedModel


def test_the_version_says_1_6() -> None:
    assert tuple(int(p) for p in CONTRACT_VERSION.split(".")) >= (1, 6)
    assert hasattr(specs, "agent_host_turn_started")


class _Seen:
    def __init__(self) -> None:
        self.starts: list[TurnStart] = []
        self.order: list[str] = []

    @hookimpl
    def agent_host_turn_started(self, turn: TurnStart) -> None:
        self.starts.append(turn)
        self.order.append("turn-started")

    @hookimpl
    def agent_host_tools(self, agent: Any) -> list[Any]:
        self.order.append("tools")
        return []


@pytest.mark.asyncio
async def test_the_reference_host_reports_each_turn_before_its_first_step(tmp_path: Path) -> None:
    seen = _Seen()
    async with ReferenceHost(workspace=tmp_path, load_entry_points=False, plugins=[seen]) as host:
        session = await host.start_session(model=ScriptedModel([AssistantTurn(text="a"), AssistantTurn(text="b")]))
        seen.order.clear()
        await session.run_turn("first, please")
        assert seen.order[0] == "turn-started"  # before the tool view of its first step
        await session.run_turn("/ralph second", grants=("ralph",))
    assert [(t.turn, t.user_text, t.grants) for t in seen.starts] == [
        (1, "first, please", ()),
        (2, "/ralph second", ("ralph",)),
    ]
    assert all(t.agent == session.agent for t in seen.starts)


@pytest.mark.asyncio
async def test_a_failing_turn_start_aborts_the_turn_before_its_model_request(tmp_path: Path) -> None:
    class Refuses:
        @hookimpl
        def agent_host_turn_started(self, turn: TurnStart) -> None:
            raise RuntimeError("no")

    model = ScriptedModel([AssistantTurn(text="never")])
    async with ReferenceHost(workspace=tmp_path, load_entry_points=False, plugins=[Refuses()]) as host:
        session = await host.start_session(model=model)
        with pytest.raises(RuntimeError):
            await session.run_turn("hello")
        assert model.requests == []
        assert not [e for e in session.log.events if e.type == "user-message"]
