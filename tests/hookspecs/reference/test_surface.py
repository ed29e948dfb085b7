"""The model-visible surface: context messages (supersession by provenance) and compaction."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pytest

from hookspecs import (
    CompactionInfo,
    ContextMessage,
    HostServices,
    StepInfo,
    ToolContext,
    ToolDefinition,
    ToolSpec,
    hookimpl,
)
from hookspecs.i18n import message
from hookspecs.reference import AssistantTurn, ReferenceHost, RequestedCall, ScriptedModel
from hookspecs.reference.session_log import Event
from hookspecs.reference.surface import Surface, presented


def ev(type_: str, **data: Any) -> Event:
    return Event(seq=0, type=type_, data=data)


def settled(call_id: str, *, top_level: bool = True, turn: int = 1, **result: Any) -> Event:
    body = {"status": "ok", "value": None, "error": None, "presentation": None} | result
    return ev("tool-settled", call_id=call_id, top_level=top_level, turn=turn, result=body)


def test_context_messages_supersede_by_provenance_and_keep_others() -> None:
    surface = Surface()
    surface.apply(ev("user-message", turn=1, text="hi"))
    surface.apply(ev("context-message", provenance="catalog", text="v1", turn=1, step=1))
    surface.apply(ev("context-message", provenance="notice", text="N", turn=1, step=1))
    surface.apply(ev("assistant-message", turn=1, step=1, text="ok", tool_calls=[]))
    surface.apply(ev("context-message", provenance="catalog", text="v2", turn=2, step=1))
    assert surface.messages() == (
        {"role": "user", "content": "hi"},
        {"role": "system", "content": "N"},
        {"role": "assistant", "content": "ok"},
        {"role": "system", "content": "v2"},
    )
    assert [e.provenance for e in surface.entries] == [None, "notice", None, "catalog"]


def test_tool_results_enter_the_surface_only_for_top_level_calls() -> None:
    surface = Surface()
    call = {"call_id": "c1", "tool": "echo", "arguments": {"text": "x"}}
    surface.apply(ev("assistant-message", turn=1, step=1, text="", tool_calls=[call]))
    surface.apply(settled("c1:ptc:1", top_level=False, value="nested"))
    surface.apply(settled("c1", value={"b": 1, "a": [2]}))
    surface.apply(ev("tool-started", call_id="c2", tool="echo", arguments={}))  # ignored
    assert surface.messages() == (
        {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "name": "echo", "arguments": {"text": "x"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": '{"a":[2],"b":1}'},
    )
    assert surface.visible_call_ids() == {"c1"}


def test_presented_prefers_presentation_then_value_then_error() -> None:
    assert presented({"status": "ok", "value": {"z": 1, "a": None}, "presentation": None}) == '{"a":null,"z":1}'
    assert presented({"status": "ok", "value": [1], "presentation": "shown"}) == "shown"
    failed = {"status": "error", "value": None, "presentation": None, "error": {"code": "boom", "message": "bad"}}
    assert presented(failed) == '{"error":"boom","message":"bad"}'


def test_compaction_keeps_only_the_listed_calls_after_the_summary() -> None:
    surface = Surface()
    for turn, cid in ((1, "old"), (2, "new")):
        surface.apply(ev("user-message", turn=turn, text=f"u{turn}"))
        surface.apply(ev("context-message", provenance=f"p{turn}", text=f"ctx{turn}", turn=turn, step=1))
        call = {"call_id": cid, "tool": "echo", "arguments": {}}
        surface.apply(ev("assistant-message", turn=turn, step=1, text="", tool_calls=[call]))
        surface.apply(settled(cid, turn=turn, value=cid))
    surface.apply(ev("compaction", summary="S", kept_call_ids=["new"], turn=2))
    assert surface.messages() == (
        {"role": "user", "content": "S"},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "new", "name": "echo", "arguments": {}}]},
        {"role": "tool", "tool_call_id": "new", "content": '"new"'},
    )
    assert surface.visible_call_ids() == {"new"}


def test_compaction_keeps_the_context_messages_it_names_in_place() -> None:
    """Contract 1.3: ``kept_provenances`` survive with the kept calls, in their order; the rest are gone."""
    surface = Surface()
    surface.apply(ev("context-message", provenance="catalog", text="cat", turn=1, step=1))
    surface.apply(ev("user-message", turn=1, text="u1"))
    surface.apply(ev("context-message", provenance="expansion:1", text="exp", turn=1, step=2))
    call = {"call_id": "c", "tool": "echo", "arguments": {}}
    surface.apply(ev("assistant-message", turn=1, step=2, text="", tool_calls=[call]))
    surface.apply(settled("c", value="c"))
    surface.apply(ev("compaction", summary="S", kept_call_ids=["c"], kept_provenances=["expansion:1"], turn=1))
    assert surface.messages() == (
        {"role": "user", "content": "S"},
        {"role": "system", "content": "exp"},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "c", "name": "echo", "arguments": {}}]},
        {"role": "tool", "tool_call_id": "c", "content": '"c"'},
    )


def test_a_compaction_event_from_before_1_3_keeps_no_context_message() -> None:
    """A log written before ``kept_provenances`` existed replays as it did then: context messages gone."""
    surface = Surface()
    surface.apply(ev("context-message", provenance="catalog", text="cat", turn=1, step=1))
    surface.apply(ev("user-message", turn=1, text="u1"))
    surface.apply(ev("compaction", summary="S", kept_call_ids=[], turn=1))
    assert surface.messages() == ({"role": "user", "content": "S"},)


@pytest.mark.asyncio
async def test_the_host_keeps_the_latest_turns_context_messages_and_reports_them(
    make_reference_host: Callable[..., ReferenceHost],
) -> None:
    compactions: list[CompactionInfo] = []

    class Messages:
        @hookimpl
        def agent_host_compaction(self, compaction: CompactionInfo, services: HostServices) -> None:
            compactions.append(compaction)

        @hookimpl
        def agent_host_context_messages(self, step: StepInfo, services: HostServices) -> Sequence[ContextMessage]:
            return [ContextMessage(provenance=f"turn-{step.turn}", text=f"context of turn {step.turn}")]

    model = ScriptedModel([AssistantTurn(text="one"), AssistantTurn(text="two")])
    async with make_reference_host(plugins=[Messages()]) as host:
        session = await host.start_session(model=model)
        await session.run_turn("first")
        await session.run_turn("second")
        info = session.compact()
        surface = session.surface.messages()
    async with make_reference_host(plugins=[Messages()]) as again:
        resumed = await again.resume_session(session.agent.session_id, model=ScriptedModel([]))
        resumed_surface = resumed.surface.messages()
    assert info.kept_provenances == ("turn-2",) and compactions == [info]
    assert [m["content"] for m in surface if m["role"] == "system"] == ["context of turn 2"]
    assert resumed_surface == surface  # the persisted event replays to the same surface


@pytest.mark.asyncio
async def test_compaction_through_the_host_then_context_recovery(
    make_reference_host: Callable[..., ReferenceHost],
) -> None:
    compactions: list[CompactionInfo] = []

    class Recovery:
        @hookimpl
        def agent_host_compaction(self, compaction: CompactionInfo, services: HostServices) -> None:
            compactions.append(compaction)

        @hookimpl
        def agent_host_context_messages(self, step: StepInfo, services: HostServices) -> Sequence[ContextMessage]:
            if step.turn == 1 and step.step == 1:
                return [ContextMessage(provenance="catalog", text="full catalog")]
            if compactions and step.turn == 3 and step.step == 1:
                return [ContextMessage(provenance="catalog", text="recovered catalog")]
            return []

    async def echo(arguments: Any, context: ToolContext) -> Any:
        return arguments["text"]

    def call(cid: str) -> AssistantTurn:
        return AssistantTurn(tool_calls=(RequestedCall(call_id=cid, tool="echo", arguments={"text": cid}),))

    model = ScriptedModel(
        [call("t1"), AssistantTurn(text="one"), call("t2"), AssistantTurn(text="two"), AssistantTurn(text="three")]
    )
    tools = [ToolDefinition(spec=ToolSpec(name="echo", description="Echo."), handler=echo)]
    async with make_reference_host(tools=tools, plugins=[Recovery()]) as host:
        session = await host.start_session(model=model)
        await session.run_turn("first")
        await session.run_turn("second")
        entries_before = len(session.surface.entries)
        requests_before = len(model.requests)
        receipt = session.command("/compact")
        assert len(model.requests) == requests_before  # a slash command never asks the model
        assert receipt.text == message("host.compacted", kept=1)
        summary = message("host.compaction-summary", count=entries_before)
        assert session.surface.messages() == (
            {"role": "user", "content": summary},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [{"id": "t2", "name": "echo", "arguments": {"text": "t2"}}],
            },
            {"role": "tool", "tool_call_id": "t2", "content": '"t2"'},
        )
        await session.run_turn("third")
        raw = [e.data["text"] for e in session.log.of_type("context-message")]
    assert compactions[0].kept_call_ids == ("t2",) and compactions[0].summary == summary
    assert compactions[0].kept_provenances == ()  # turn 2 committed no context message
    last = model.requests[-1].messages
    assert [m["content"] for m in last if m["role"] == "system"] == ["recovered catalog"]
    assert last[0] == {"role": "user", "content": summary}
    assert raw == ["full catalog", "recovered catalog"]  # the raw log keeps every commit
