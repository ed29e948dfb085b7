"""The native + tool search style's plugin on the reference host: deferred schemas, loaded by searching."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from hookspecs.reference import AssistantTurn, ReferenceHost, RequestedCall, ScriptedModel
from ptc_plus.evaluation.runner import filler_definition
from ptc_plus.evaluation.tool_search import MAX_RESULTS, ToolSearchPlugin, anchor_request
from tests.ptc_plus.evaluation.tiny_suite import World, filler, tools


def call(tool: str, **arguments: object) -> AssistantTurn:
    return AssistantTurn(tool_calls=(RequestedCall(tool=tool, arguments=dict(arguments)),))


def host(tmp_path: Path, plugin: ToolSearchPlugin, fillers: int = 20) -> ReferenceHost:
    definitions = [*tools(tmp_path, World()), *(filler_definition(s, []) for s in filler(fillers))]
    return ReferenceHost(workspace=tmp_path, tools=definitions, plugins=[plugin], load_entry_points=False)


@pytest.mark.asyncio
async def test_only_tool_search_then_the_loaded_tools_are_offered(tmp_path: Path) -> None:
    plugin = ToolSearchPlugin()
    model = ScriptedModel(
        [
            call("lookup_order", order_id=2),  # not loaded yet: the host refuses it as unknown
            call("tool_search", query="weather forecast for a city"),
            call("weather_forecast", city="Oslo"),
            AssistantTurn(text="snow"),
        ]
    )
    async with host(tmp_path, plugin) as h:
        session = await h.start_session(model=model)
        await session.run_turn("forecast?")
        first, second, third, fourth = model.requests
        assert [t.name for t in first.tools] == ["tool_search"]
        refused = orjson.loads(second.messages[-1]["content"])
        assert refused["error"] and "lookup_order" in refused["message"]
        assert [t.name for t in second.tools] == ["tool_search"]
        found = orjson.loads(third.messages[-1]["content"])
        names = [t["name"] for t in found["loaded"]]
        assert names[0] == "weather_forecast" and len(names) <= MAX_RESULTS
        # The definitions sit in the result (the anchor's expanded reference); the host offers the tools so
        # it dispatches them, and the anchor's wire request drops them from the list (ADR 0094).
        assert all(set(t) == {"name", "description", "input_schema"} for t in found["loaded"])
        assert [t.name for t in third.tools] == ["tool_search", *names]
        assert [t.name for t in anchor_request(third).tools] == ["tool_search"]
        assert orjson.loads(fourth.messages[-1]["content"]) == {"city": "Oslo", "sky": "snow"}
        assert plugin.loaded(session.agent.session_id) == names


@pytest.mark.asyncio
async def test_search_finds_the_tool_among_many_and_children_load_their_own(tmp_path: Path) -> None:
    plugin = ToolSearchPlugin()
    model = ScriptedModel([call("tool_search", query="look up an order by id"), AssistantTurn(text="done")])
    async with host(tmp_path, plugin, fillers=300) as h:
        session = await h.start_session(model=model)
        await session.run_turn("find it")
        loaded = plugin.loaded(session.agent.session_id)
        assert loaded[0] == "lookup_order"
        child = await session.fork()
        assert plugin.loaded(child.agent.session_id) == []
        assert [t.name for t in child.model_tools()] == ["tool_search"]
