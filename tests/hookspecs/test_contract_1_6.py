"""Contract 1.6 (ADR 0125): a turn's start reaches plugins with the user's text and the host's grants."""

from __future__ import annotations

from pathlib import Path

import pytest

from hookspecs import CONTRACT_VERSION, TurnStart, hookimpl, specs
from hookspecs.reference import AssistantTurn, ReferenceHost, ScriptedModel


def test_the_version_says_1_6() -> None:
    assert tuple(int(p) for p in CONTRACT_VERSION.split(".")) >= (1, 6)
    assert hasattr(specs, "agent_host_turn_started")  # its contract test: tests/hookspecs/test_hooks.py


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
