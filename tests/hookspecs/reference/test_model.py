"""The scripted model and the host's turn loop limits; the tool registry's checks."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from hookspecs import AgentRef, HostServices, ToolContext, ToolDefinition, ToolSpec, hookimpl
from hookspecs.reference import AssistantTurn, HostError, ModelRequest, ReferenceHost, RequestedCall, ScriptedModel


def tool(name: str, schema: dict[str, Any] | None = None) -> ToolDefinition:
    async def handler(arguments: Any, context: ToolContext) -> Any:
        return name

    return ToolDefinition(
        spec=ToolSpec(name=name, description=name, input_schema=schema or {"type": "object"}), handler=handler
    )


@pytest.mark.asyncio
async def test_scripted_model_from_jsonl(tmp_path: Path) -> None:
    script = tmp_path / "script.jsonl"
    script.write_text('{"tool_calls": [{"tool": "echo", "arguments": {"t": 1}}]}\n\n{"text": "done"}\n')
    model = ScriptedModel.from_jsonl(script)
    assert model.remaining == 2
    request = ModelRequest(system="S", messages=(), tools=())
    assert await model.complete(request) == AssistantTurn(tool_calls=(RequestedCall(tool="echo", arguments={"t": 1}),))
    assert await model.complete(request) == AssistantTurn(text="done")
    with pytest.raises(HostError) as excinfo:
        await model.complete(request)
    assert excinfo.value.code == "HOST-0301" and model.requests == [request] * 3


@pytest.mark.parametrize(
    ("text", "line"), [('{"text": "ok"}\n{not json\n', 2), ('{"tool_calls": [{"arguments": {}}]}\n', 1)]
)
def test_bad_script_is_host_0302(tmp_path: Path, text: str, line: int) -> None:
    script = tmp_path / "script.jsonl"
    script.write_text(text)
    with pytest.raises(HostError) as excinfo:
        ScriptedModel.from_jsonl(script)
    assert excinfo.value.code == "HOST-0302" and excinfo.value.params["line"] == line


@pytest.mark.asyncio
async def test_turn_limits(make_reference_host: Callable[..., ReferenceHost]) -> None:
    looping = ScriptedModel([AssistantTurn(tool_calls=(RequestedCall(tool="t", arguments={}),))] * 3)
    async with make_reference_host(tools=[tool("t")], max_steps=2) as host:
        session = await host.start_session(model=looping)
        with pytest.raises(HostError) as excinfo:
            await session.run_turn("loop")
        assert excinfo.value.code == "HOST-0303" and len(looping.requests) == 2
        ids = [e.data["call_id"] for e in session.log.of_type("tool-settled")]
        sid = session.agent.session_id  # host-assigned ids when the model gives none name the session (ADR 0089)
        assert ids == [f"call-1-1-0@{sid}", f"call-1-2-0@{sid}"]
        silent = await host.start_session()
        with pytest.raises(HostError) as no_model:
            await silent.run_turn("hello?")
        assert no_model.value.code == "HOST-0305"
        with pytest.raises(HostError) as unknown:
            host.session("s-unknown")
        assert unknown.value.code == "HOST-0307"


def test_duplicate_and_invalid_tools_are_refused(make_reference_host: Callable[..., ReferenceHost]) -> None:
    with pytest.raises(HostError) as duplicate:
        make_reference_host(tools=[tool("x"), tool("x")])
    assert duplicate.value.code == "HOST-0201"
    with pytest.raises(HostError) as invalid:
        make_reference_host(tools=[tool("y", {"type": "object", "properties": {"n": {"type": "no-such-type"}}})])
    assert invalid.value.code == "HOST-0202"


@pytest.mark.asyncio
async def test_plugin_tool_colliding_with_a_host_tool_is_refused(
    make_reference_host: Callable[..., ReferenceHost],
) -> None:
    class Colliding:
        @hookimpl
        def agent_host_tools(self, agent: AgentRef, services: HostServices) -> Sequence[ToolDefinition]:
            return [tool("x")]

    async with make_reference_host(tools=[tool("x")], plugins=[Colliding()]) as host:
        session = await host.start_session()
        with pytest.raises(HostError) as excinfo:
            host.view(session.agent)
    assert excinfo.value.code == "HOST-0201"
