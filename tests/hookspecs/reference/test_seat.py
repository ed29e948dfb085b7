"""A client in the model's seat (mcp-serve, the llm plugin) steps a session through the reference host's own step.

The offer of a step's context messages and the dispatch of the client's call are the
session's (:meth:`Session.offer_step`, :meth:`Session.seat_call`), the same code a
model's turn runs, so a served step logs what a model's step logs (ADR 0121).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pytest

from hookspecs import ContextMessage, HostServices, StepInfo, ToolContext, ToolDefinition, ToolSpec, hookimpl
from hookspecs.reference import AssistantTurn, ReferenceHost, RequestedCall, ScriptedModel, Session, read_events


def echo() -> ToolDefinition:
    async def handler(arguments: Any, context: ToolContext) -> Any:
        return {"echo": arguments.get("text")}

    return ToolDefinition(spec=ToolSpec(name="echo", description="Echo the text."), handler=handler)


class Offers:
    """Offers one context message at every step, naming the step."""

    @hookimpl
    def agent_host_context_messages(self, step: StepInfo, services: HostServices) -> Sequence[ContextMessage]:
        return [ContextMessage(provenance="steps", text=f"turn {step.turn} step {step.step}")]


def _shape(session: Session) -> list[tuple[str, dict[str, Any]]]:
    """The session's events as written to its file, without what only timing or the run decides."""
    kept = ("context-message", "user-message", "assistant-message", "tool-started", "tool-settled")
    shapes = []
    for event in read_events(session.log.path):
        if event.type in kept:
            data = {k: v for k, v in event.data.items() if k in ("provenance", "text", "turn", "step", "tool_calls")}
            if event.type == "tool-settled":
                data |= {"top_level": event.data.get("top_level"), "value": event.data["result"]["value"]}
            shapes.append((event.type, data))
    return shapes


@pytest.mark.asyncio
async def test_offer_step_commits_what_the_plugins_offer_and_returns_it(
    make_reference_host: Callable[..., ReferenceHost],
) -> None:
    async with make_reference_host(tools=[echo()], plugins=[Offers()]) as host:
        session = await host.start_session()
        offered = session.offer_step(1, 1)
        assert [m.text for m in offered] == ["turn 1 step 1"]
        # Durable and on the surface: what the model (or the client) reads next.
        assert _shape(session) == [
            ("context-message", {"provenance": "steps", "text": "turn 1 step 1", "turn": 1, "step": 1})
        ]
        assert session.surface.messages() == ({"role": "system", "content": "turn 1 step 1"},)


@pytest.mark.asyncio
async def test_a_seat_call_logs_what_a_model_s_step_with_that_call_logs(
    make_reference_host: Callable[..., ReferenceHost],
) -> None:
    call = RequestedCall(tool="echo", arguments={"text": "hi"}, call_id="c1")
    model = ScriptedModel([AssistantTurn(tool_calls=(call,)), AssistantTurn(text="done")])
    async with make_reference_host(tools=[echo()], plugins=[Offers()]) as host:
        by_model = await host.start_session(model=model)
        await by_model.run_turn("question")
        seated = await host.start_session()
        seated.offer_step(1, 1)
        seated.append("user-message", {"turn": 1, "text": "question"})
        result = await seated.seat_call(turn=1, step=1, call_id="c1", tool="echo", arguments={"text": "hi"})
        seated.offer_step(1, 2)
    assert result.ok and result.value == {"echo": "hi"}
    model_steps = _shape(by_model)
    # The model's turn then answers (its step 2's assistant message); up to there the two logs agree.
    assert _shape(seated) == model_steps[: len(_shape(seated))]
    assert [kind for kind, _ in model_steps][len(_shape(seated)) :] == ["assistant-message"]


@pytest.mark.asyncio
async def test_a_seat_call_of_a_tool_the_session_does_not_offer_is_refused(
    make_reference_host: Callable[..., ReferenceHost],
) -> None:
    async with make_reference_host(tools=[echo()]) as host:
        session = await host.start_session()
        result = await session.seat_call(turn=1, step=1, call_id="c1", tool="missing", arguments={})
    assert not result.ok
    assert result.error is not None and "missing" in result.error.message
