"""Child agents: family lineage, narrower views, never wider, hooks in order, resume keeps the scope."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import orjson
import pytest

from hookspecs import HostServices, SessionInfo, ToolContext, ToolDefinition, ToolSpec, hookimpl
from hookspecs.reference import AssistantTurn, HostError, ReferenceHost, RequestedCall, ScriptedModel


def tool(name: str) -> ToolDefinition:
    async def handler(arguments: Any, context: ToolContext) -> Any:
        return name

    return ToolDefinition(spec=ToolSpec(name=name, description=f"The {name} tool."), handler=handler)


class Lineage:
    def __init__(self) -> None:
        self.trace: list[tuple[str, str]] = []

    @hookimpl
    def agent_host_tools(self, agent: Any, services: HostServices) -> Sequence[ToolDefinition]:
        return [tool("plugin_tool")]

    @hookimpl
    def agent_host_agent_fork(self, parent: SessionInfo, child: SessionInfo, services: HostServices) -> None:
        self.trace.append(("fork", child.agent.session_id))

    @hookimpl
    def agent_host_session_start(self, session: SessionInfo, services: HostServices) -> None:
        self.trace.append(("start", session.agent.session_id))


@pytest.mark.asyncio
async def test_child_joins_the_family_with_a_narrower_view(make_reference_host: Callable[..., ReferenceHost]) -> None:
    lineage = Lineage()
    async with make_reference_host(tools=[tool("a"), tool("b")], plugins=[lineage], user_id="u") as host:
        root = await host.start_session(model=ScriptedModel([]), title="root")
        child = await root.fork(title="child", tools=["a", "plugin_tool"])
        grandchild = await child.fork(tools=["a"])
        rid = root.agent.session_id
        assert child.agent.family_id == grandchild.agent.family_id == rid
        assert child.agent.parent_session_id == rid
        assert grandchild.agent.parent_session_id == child.agent.session_id
        assert child.agent.agent_id == child.agent.session_id != rid
        assert (child.info.title, child.info.user_id, child.info.model_route) == ("child", "u", "scripted")
        assert child.model is root.model
        assert host.view(root.agent).names() == ["a", "b", "plugin_tool"]
        assert host.view(child.agent).names() == ["a", "plugin_tool"]
        assert host.view(grandchild.agent).names() == ["a"]
        # Outside its view a tool is unknown to the child, though the parent has it.
        refused = await child.call_tool("b", {})
        assert refused.error is not None and refused.error.code == "unknown-tool" and not refused.dispatched
        full_child = await root.fork()
        assert host.view(full_child.agent).names() == host.view(root.agent).names()
        forked = [e.data["child_session_id"] for e in root.log.of_type("child-forked")]
        started = child.log.events[0]
    assert forked == [child.agent.session_id, full_child.agent.session_id]
    assert started.type == "session-started" and started.data["scope"] == ["a", "plugin_tool"]
    cid, gid = child.agent.session_id, grandchild.agent.session_id
    assert lineage.trace[:5] == [("start", rid), ("fork", cid), ("start", cid), ("fork", gid), ("start", gid)]


@pytest.mark.asyncio
async def test_a_child_never_gets_wider_tools(make_reference_host: Callable[..., ReferenceHost]) -> None:
    lineage = Lineage()
    async with make_reference_host(tools=[tool("a"), tool("b")], plugins=[lineage]) as host:
        root = await host.start_session()
        child = await root.fork(tools=["a"])
        logs_before = sorted(p.name for p in (host.state_dir / "sessions").glob("*.jsonl"))
        trace_before = list(lineage.trace)
        with pytest.raises(HostError) as excinfo:
            await root.fork(tools=["a", "nope"])
        assert excinfo.value.code == "HOST-0304" and excinfo.value.params == {"names": "nope"}
        with pytest.raises(HostError) as wider:
            await child.fork(tools=["a", "b"])  # the root has b, the child does not
        assert wider.value.code == "HOST-0304" and wider.value.params == {"names": "b"}
        assert sorted(p.name for p in (host.state_dir / "sessions").glob("*.jsonl")) == logs_before
        assert lineage.trace == trace_before  # no hook ran for a refused fork


@pytest.mark.asyncio
async def test_a_resumed_child_keeps_its_family_and_scope(make_reference_host: Callable[..., ReferenceHost]) -> None:
    async with make_reference_host(tools=[tool("a"), tool("b")]) as host:
        root = await host.start_session()
        child = await root.fork(tools=["b"])
        cid = child.agent.session_id
    model = ScriptedModel(
        [AssistantTurn(tool_calls=(RequestedCall(call_id="x", tool="a", arguments={}),)), AssistantTurn(text="ok")]
    )
    async with make_reference_host(tools=[tool("a"), tool("b")]) as host:
        resumed = await host.resume_session(cid, model=model)
        assert resumed.agent == child.agent
        assert host.view(resumed.agent).names() == ["b"]
        await resumed.run_turn("use a")
    assert [t.name for t in model.requests[0].tools] == ["b"]
    tool_message = model.requests[1].messages[-1]
    assert orjson.loads(tool_message["content"])["error"] == "unknown-tool"
