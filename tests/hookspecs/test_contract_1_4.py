"""Contract 1.4 (ADR 0089): its version, per-host plugin state, and call identity per session."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path

import pytest

from hookspecs import (
    CONTRACT_VERSION,
    HostServices,
    JSONObject,
    JSONValue,
    ToolCall,
    ToolContext,
    hookimpl,
    specs,
    tool,
)
from hookspecs.reference import AssistantTurn, ReferenceHost, RequestedCall, ScriptedModel


def test_the_contract_version_is_at_least_1_4() -> None:
    # 1.5 (ADR 0116) only added an optional service: what 1.4 promised still holds.
    assert tuple(int(p) for p in CONTRACT_VERSION.split(".")) >= (1, 4)
    assert CONTRACT_VERSION == specs.CONTRACT_VERSION


def test_plugin_state_is_part_of_the_services_contract() -> None:
    doc = " ".join((inspect.getdoc(HostServices.plugin_state) or "").split())
    assert "contract 1.4" in doc and "never shared with another host" in doc and "dropped once shutdown ran" in doc


class Keeper:
    """A plugin that keeps a counter in its host's plugin state and records what shutdown saw."""

    def __init__(self) -> None:
        self.at_shutdown: list[dict[str, object]] = []

    @hookimpl
    def agent_host_session_start(self, services: HostServices) -> None:
        state = services.plugin_state
        count = state.get("keeper", 0)
        assert isinstance(count, int)
        state["keeper"] = count + 1

    @hookimpl
    def agent_host_shutdown(self, services: HostServices) -> None:
        self.at_shutdown.append(dict(services.plugin_state))


@pytest.mark.asyncio
async def test_each_host_has_its_own_plugin_state_dropped_after_shutdown(
    make_reference_host: Callable[..., ReferenceHost], tmp_path: Path
) -> None:
    keeper = Keeper()
    one = make_reference_host(plugins=[keeper])
    other = make_reference_host(plugins=[keeper], state_dir=tmp_path / "other")
    assert dict(one.services.plugin_state) == {} and one.services.plugin_state is not other.services.plugin_state
    await one.start_session()
    await one.start_session()
    await other.start_session()
    assert one.services.plugin_state["keeper"] == 2 and other.services.plugin_state["keeper"] == 1
    await one.aclose()
    await other.aclose()
    assert keeper.at_shutdown == [{"keeper": 2}, {"keeper": 1}]  # still there while shutdown runs...
    assert dict(one.services.plugin_state) == {} == dict(other.services.plugin_state)  # ...gone after


@pytest.mark.asyncio
async def test_host_assigned_call_ids_name_their_session(make_reference_host: Callable[..., ReferenceHost]) -> None:
    seen: list[ToolCall] = []

    class Seen:
        @hookimpl
        def agent_host_guard(self, call: ToolCall, services: HostServices) -> None:
            seen.append(call)

    def model() -> ScriptedModel:
        return ScriptedModel([AssistantTurn(tool_calls=(RequestedCall(tool="t", arguments={}),)), AssistantTurn()])

    @tool("t", description="Nothing.")
    async def t(arguments: JSONObject, context: ToolContext) -> JSONValue:
        return None

    async with make_reference_host(plugins=[Seen()], tools=[t]) as host:
        a = await host.start_session(model=model())
        b = await host.start_session(model=model())
        child = await a.fork()
        child.model = model()
        for session in (a, b, child):
            await session.run_turn("go")
            await session.call_tool("t", {})
    ids = [c.call_id for c in seen]
    assert len(ids) == len(set(ids)) == 6  # the same turn, step and count in three sessions: six ids
    for call in seen:
        assert call.call_id.endswith(f"@{call.caller.session_id}"), call.call_id
