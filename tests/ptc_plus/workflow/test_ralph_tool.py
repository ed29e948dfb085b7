"""The ``ralph`` tool (ADR 0125): offered only in a turn whose user asked for Ralph (contract 1.6), never otherwise.

The parent's model is scripted; the rounds' children are the workflow fixtures' :class:`ChildModel`. The rule:
a root session's turn earns one grant when its user text holds the token ``/ralph`` or the host grants
``"ralph"``; the tool is offered while the grant lasts; the first run started uses it up.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

import ptc_plus.plugin
from hookspecs import TurnStart
from hookspecs.reference import (
    AssistantTurn,
    HostError,
    ModelRequest,
    ReferenceHost,
    RequestedCall,
    ScriptedModel,
    Session,
)
from ptc_plus.workflow import asks_for_ralph

from .conftest import Board

HostFactory = Callable[..., Awaitable[ReferenceHost]]
pytestmark = pytest.mark.asyncio

_RALPH = RequestedCall(tool="ralph", arguments={"objective": "blocked: deploy the site"})


def _offered(model: ScriptedModel) -> list[list[str]]:
    return [[t.name for t in request.tools] for request in model.requests]


def _results(session: Session, tool: str) -> list[dict[str, Any]]:
    return [
        e.data["result"] for e in session.log.events if e.type == "tool-settled" and e.data["result"]["tool"] == tool
    ]


async def _settled(host: ReferenceHost, session: Session) -> list[str]:
    desk = ptc_plus.plugin.desk(host.services)
    assert desk is not None
    runs = desk.ralphs.get(session.agent.session_id, [])
    return [str((await asyncio.shield(task)).state) for _run, task in runs]


async def test_the_rule_for_a_user_text_that_asks() -> None:
    assert asks_for_ralph("/ralph write the docs")
    assert asks_for_ralph("please /ralph until the tests pass")
    assert asks_for_ralph("run it\n/ralph")
    assert not asks_for_ralph("write the docs")
    assert not asks_for_ralph("ralph, write the docs")  # the word alone is not the request
    assert not asks_for_ralph("see docs/ralph and /ralphs")  # nor a path or a longer word
    assert not asks_for_ralph("x/ralph now")


async def test_offered_only_in_the_turn_that_asked_and_used_up_by_one_run(open_host: HostFactory) -> None:
    host = await open_host()
    model = ScriptedModel(
        [
            AssistantTurn(text="plain answer"),  # turn 1: the user did not ask
            AssistantTurn(tool_calls=(_RALPH,)),  # turn 2: the user asked
            AssistantTurn(text="started it"),
            AssistantTurn(text="ok"),  # turn 3: not asked again
        ]
    )
    session = await host.start_session(model=model)
    await session.run_turn("deploy the site")
    await session.run_turn("please /ralph until the site is deployed")
    await session.run_turn("thanks")
    offered = _offered(model)
    assert "ralph" not in offered[0]
    assert "ralph" in offered[1]
    assert "ralph" not in offered[2]  # the grant was used by the one run
    assert "ralph" not in offered[3]
    [started] = _results(session, "ralph")
    assert started["status"] == "ok" and str(started["value"]["job"]).startswith("ralph-")
    assert await _settled(host, session) == ["blocked"]


async def test_a_model_starting_ralph_unasked_is_refused(open_host: HostFactory, board: Board) -> None:
    host = await open_host()
    model = ScriptedModel([AssistantTurn(tool_calls=(_RALPH,)), AssistantTurn(text="tried")])
    session = await host.start_session(model=model)
    await session.run_turn("deploy the site, ralph")
    [refused] = _results(session, "ralph")
    assert refused["status"] == "error" and refused["error"]["code"] == "unknown-tool"
    assert "ralph" not in _offered(model)[0]
    assert board.ralph_rounds == [] and await _settled(host, session) == []


async def test_a_second_start_in_the_asking_turn_is_refused_with_8033(open_host: HostFactory, board: Board) -> None:
    host = await open_host()
    model = ScriptedModel([AssistantTurn(tool_calls=(_RALPH, _RALPH)), AssistantTurn(text="done")])
    session = await host.start_session(model=model)
    await session.run_turn("/ralph deploy the site")
    first, second = _results(session, "ralph")
    assert first["status"] == "ok"
    assert second["status"] == "error" and second["error"]["code"] == "PTC-8033"
    assert await _settled(host, session) == ["blocked"]  # one run, not two


async def test_the_host_can_grant_a_turn_and_a_child_never_earns_one(open_host: HostFactory) -> None:
    host = await open_host()
    model = ScriptedModel([AssistantTurn(tool_calls=(_RALPH,)), AssistantTurn(text="granted")])
    session = await host.start_session(model=model)
    await session.run_turn("deploy the site", grants=("ralph",))
    [started] = _results(session, "ralph")
    assert started["status"] == "ok"
    child = await session.fork(title="c")
    desk = ptc_plus.plugin.desk(host.services)
    assert desk is not None
    desk.turn_started(TurnStart(agent=child.agent, turn=1, user_text="/ralph do it", grants=("ralph",)))
    assert "ralph" not in host.view(child.agent).names()  # a child's "user text" is a model's prompt
    assert await _settled(host, session) == ["blocked"]


async def test_a_failed_turn_leaves_no_grant_behind(open_host: HostFactory, board: Board) -> None:
    first: list[ModelRequest] = []

    class FailsFirst(ScriptedModel):
        async def complete(self, request: ModelRequest) -> AssistantTurn:
            if not first:
                first.append(request)
                raise HostError("HOST-0301", count=0)  # the asking turn fails before the model answered
            return await super().complete(request)

    host = await open_host()
    model = FailsFirst([AssistantTurn(tool_calls=(_RALPH,)), AssistantTurn(text="tried")])
    session = await host.start_session(model=model)
    with pytest.raises(HostError, match="HOST-0301"):
        await session.run_turn("/ralph deploy the site")
    assert "ralph" in [t.name for t in first[0].tools]
    await session.run_turn("go on")  # no turn_settled came for the failed one: this start drops its grant
    assert "ralph" not in _offered(model)[0]
    [refused] = _results(session, "ralph")
    assert refused["status"] == "error"
    assert board.ralph_rounds == [] and await _settled(host, session) == []


async def test_a_failed_turns_grant_ends_with_it_before_a_direct_call(open_host: HostFactory, board: Board) -> None:
    """ADR 0133: the host reports the failed turn's end (contract 1.7); a direct call after it finds no grant."""

    class Fails(ScriptedModel):
        async def complete(self, request: ModelRequest) -> AssistantTurn:
            self.requests.append(request)
            raise HostError("HOST-0301", count=0)  # the asking turn fails before the model answered

    host = await open_host()
    model = Fails([])
    session = await host.start_session(model=model)
    with pytest.raises(HostError, match="HOST-0301"):
        await session.run_turn("/ralph deploy the site")
    assert "ralph" in [t.name for t in model.requests[0].tools]  # the turn had the grant
    refused = await session.call_tool("ralph", {"objective": "blocked: deploy the site"})  # no turn runs now
    assert refused.status.value == "error"
    assert refused.error is not None and refused.error.code in {"PTC-8033", "unknown-tool"}
    assert board.ralph_rounds == [] and await _settled(host, session) == []
