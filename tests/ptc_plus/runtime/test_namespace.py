"""The program's ``tools`` namespace: exact membership, odd names, clear errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hookspecs import ToolContext
from ptc_plus.runtime.lane import NestedLane
from ptc_plus.runtime.worker.namespace import build_tools

from .conftest import FakeServices, RuntimeFactory, outer_context, tool

ODD = ("read_file", "odd-name", "class", "__class__", "__init__", "keys", "中文")


async def _echo_name(arguments: Any, context: ToolContext) -> Any:
    return context.call.tool


@pytest.mark.asyncio
async def test_odd_names_are_reachable_by_subscript_only(make_runtime: RuntimeFactory, workspace: Path) -> None:
    services = FakeServices(workspace, [tool(name, _echo_name) for name in ODD])
    lane = NestedLane(services, outer_context(services).call)
    code = (
        "out = [await tools.read_file(), await tools['odd-name'](), await tools['class'](),\n"
        "       await tools['__class__'](), await tools['__init__'](), await tools.keys(), await tools['中文']()]\n"
        "out.append(type(tools).__name__)\n"
        "out.append(sorted(dir(tools)))\n"
        "out.append('odd-name' in tools and 'run_code' not in tools)\n"
        "return out\n"
    )
    outcome = await make_runtime().run(code, workspace=workspace, tool_names=ODD, lane=lane)
    assert outcome.ok, outcome.to_json()
    *called, type_name, listed, membership = outcome.value
    assert called == ["read_file", "odd-name", "class", "__class__", "__init__", "keys", "中文"]
    assert type_name == "tools"
    assert listed == ["keys", "read_file", "中文"]
    assert membership is True


@pytest.mark.asyncio
async def test_unknown_name_lists_close_matches(make_runtime: RuntimeFactory, workspace: Path) -> None:
    services = FakeServices(workspace, [tool("read_file", _echo_name)])
    lane = NestedLane(services, outer_context(services).call)
    code = "await tools.reed_file()"
    outcome = await make_runtime().run(code, workspace=workspace, tool_names=("read_file",), lane=lane)
    assert outcome.failure is not None and outcome.failure.params["type"] == "AttributeError"
    assert "reed_file" in outcome.failure.params["message"] and "read_file" in outcome.failure.params["message"]
    assert services.dispatched == []


@pytest.mark.asyncio
async def test_an_unknown_name_without_close_matches_says_no_more(
    make_runtime: RuntimeFactory, workspace: Path
) -> None:
    services = FakeServices(workspace, [tool("read_file", _echo_name)])
    lane = NestedLane(services, outer_context(services).call)
    outcome = await make_runtime().run("await tools.zzz()", workspace=workspace, tool_names=("read_file",), lane=lane)
    assert outcome.failure is not None
    assert outcome.failure.params["message"] == "No tool named 'zzz' in tools"  # no "close matches: -"


def test_namespace_is_read_only_and_refuses_positional_arguments() -> None:
    async def invoke(name: str, args: dict[str, Any]) -> Any:
        return (name, args)

    tools = build_tools(["a"], invoke)
    with pytest.raises(AttributeError):
        tools.a = 1
    with pytest.raises(AttributeError):
        del tools.a
    with pytest.raises(KeyError):
        tools["b"]
    with pytest.raises(AttributeError):
        tools.__wrapped__  # noqa: B018 - dunder probes (copy, inspect) must not reach tools
    call = tools.a(1)
    with pytest.raises(TypeError, match="keyword arguments only"):
        call.send(None)
    assert list(tools) == ["a"] and len(tools) == 1


class _RaisingServices(FakeServices):
    """A host whose dispatch itself raises (a host defect), for one tool."""

    async def dispatch(self, call: Any) -> Any:
        if call.tool == "boom":
            raise RuntimeError("registry exploded")
        return await super().dispatch(call)


@pytest.mark.asyncio
async def test_a_dispatch_that_raises_settles_the_call_with_a_catchable_error(
    make_runtime: RuntimeFactory, workspace: Path
) -> None:
    # Before, the raise ended the lane's task without a reply: the program waited for its deadline.
    services = _RaisingServices(workspace, [tool("boom", _echo_name), tool("read_file", _echo_name)])
    lane = NestedLane(services, outer_context(services).call)
    code = (
        "try:\n"
        "    await tools.boom()\n"
        "except ToolCallError as error:\n"
        "    caught = [error.code, error.message]\n"
        "caught.append(await tools.read_file())\n"  # the lane keeps going
        "return caught\n"
    )
    outcome = await make_runtime().run(code, workspace=workspace, tool_names=("boom", "read_file"), lane=lane)
    assert outcome.ok, outcome.to_json()
    code_, message, after = outcome.value
    assert code_ == "PTC-2009"
    assert "tools.boom()" in message and "RuntimeError: registry exploded" in message
    assert after == "read_file"
