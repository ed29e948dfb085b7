"""Lossless JSON: the shared rules, and values crossing the channel in both directions unchanged."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import attrs
import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hookspecs import ToolContext
from ptc_plus.runtime.lane import NestedLane
from ptc_plus.runtime.outcome import OutcomeKind
from ptc_plus.runtime.values import INT_MAX, INT_MIN, MAX_DEPTH, NotLossless, check
from ptc_plus.runtime.worker import frames, lossless

from .conftest import FakeServices, RuntimeFactory, outer_context, tool


def _nested(depth: int) -> Any:
    value: Any = []
    for _ in range(depth - 1):
        value = [value]
    return value


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        (math.nan, "nan"),
        (math.inf, "inf"),
        ({"a": [1, -math.inf]}, "inf"),
        ({1: "x"}, "not a string"),
        ((1, 2), "tuple"),
        (b"raw", "bytes"),
        (object(), "is not JSON"),
        ({1, 2}, "is not JSON"),
        (INT_MAX + 1, "64-bit"),
        (INT_MIN - 1, "64-bit"),
        ("\ud800", "surrogate"),
        (_nested(MAX_DEPTH + 1), "deeper"),
    ],
)
def test_refused(value: Any, reason: str) -> None:
    with pytest.raises(NotLossless, match=reason):
        check(value)


def test_cycle_is_refused() -> None:
    value: list[Any] = [1]
    value.append(value)
    with pytest.raises(NotLossless, match="cycle"):
        check(value)


def test_shared_but_acyclic_values_are_fine() -> None:
    shared = {"k": 1}
    check([shared, shared, {"again": shared}])
    check(_nested(MAX_DEPTH))


def test_error_names_the_path() -> None:
    with pytest.raises(NotLossless) as caught:
        check({"rows": [0, {"x": math.nan}]})
    assert caught.value.path == "value['rows'][1]['x']"


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(INT_MIN, INT_MAX)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(), children, max_size=4),
    max_leaves=30,
)


@settings(deadline=None)  # a property of the values, not of their speed
@given(json_values)
def test_child_and_host_encoders_agree(value: Any) -> None:
    # The child encodes with json, the host decodes with orjson (and vice versa): same value, same types.
    assert orjson.loads(lossless.dumps(value)) == value
    assert lossless.dumps(orjson.loads(orjson.dumps(value))) == lossless.dumps(value)


@settings(deadline=None)  # a property of the values, not of their speed
@given(json_values)
def test_child_frames_round_trip_through_orjson(value: Any) -> None:
    # The child's frame encoder and decoder (C encoder built once, scanner called directly).
    frame = frames.encode({"type": "reply", "id": 1, "value": value})
    assert orjson.loads(frame[frames.HEADER.size :]) == {"type": "reply", "id": 1, "value": value}
    body = orjson.dumps({"type": "reply", "id": 1, "value": value})
    assert frames.decode(body) == {"type": "reply", "id": 1, "value": value}
    buffer = frames.FrameBuffer()
    assert buffer.feed(frame) == [{"type": "reply", "id": 1, "value": value}]
    assert buffer.feed(frame[:3]) == [] and buffer.feed(frame[3:] + frame) == [orjson.loads(body)] * 2


def test_child_encoder_refuses_what_json_refuses() -> None:
    with pytest.raises(ValueError):
        frames.encode({"value": math.nan})
    with pytest.raises(TypeError):
        frames.encode({"value": object()})
    with pytest.raises(ValueError):
        frames.decode(b'{"a": 1} trailing')


EDGE = {
    "ints": [0, -1, INT_MIN, INT_MAX, 2**63, 2**53 + 1],
    "floats": [0.0, -0.0, 1e308, 5e-324, 0.1, 1.5],
    "text": ["", "é", "中文", "\u2028", "\x00", "🙂", '"\\'],
    "nested": {"": {"a": [None, True, False]}},
}


@pytest.mark.asyncio
async def test_values_round_trip_through_a_program_exactly(make_runtime: RuntimeFactory, workspace: Path) -> None:
    seen: list[Any] = []

    async def echo(arguments: Any, context: ToolContext) -> Any:
        seen.append(arguments["value"])
        return arguments["value"]

    services = FakeServices(workspace, [tool("echo", echo)])
    lane = NestedLane(services, outer_context(services).call)
    code = (
        "data = await tools.echo(value=EDGE)\n"
        "assert data == EDGE, 'changed in transit'\n"
        "assert type(data['floats'][0]) is float and type(data['ints'][0]) is int\n"
        "return data\n"
    ).replace("EDGE", repr(EDGE))
    outcome = await make_runtime().run(code, workspace=workspace, tool_names=("echo",), lane=lane)
    assert outcome.ok, outcome.to_json()
    assert seen == [EDGE]
    assert orjson.dumps(outcome.value) == orjson.dumps(EDGE)
    assert math.copysign(1.0, outcome.value["floats"][1]) == -1.0


@pytest.mark.asyncio
@pytest.mark.parametrize(
    "expression",
    ["{1: 'a'}", "[float('inf')]", "b'x'", "object()", "2**64", "(1, 2)", "(lambda: None)"],
)
async def test_program_value_must_be_lossless(make_runtime: RuntimeFactory, workspace: Path, expression: str) -> None:
    outcome = await make_runtime().run(f"return {expression}", workspace=workspace)
    assert outcome.failure is not None and outcome.failure.kind is OutcomeKind.INVALID_OUTPUT


@pytest.mark.asyncio
async def test_cyclic_value_is_invalid_output(make_runtime: RuntimeFactory, workspace: Path) -> None:
    outcome = await make_runtime().run("x = []\nx.append(x)\nreturn x", workspace=workspace)
    assert outcome.failure is not None and outcome.failure.kind is OutcomeKind.INVALID_OUTPUT
    assert "cycle" in outcome.failure.message()


@pytest.mark.asyncio
async def test_bad_arguments_raise_a_type_error_inside_the_program(
    make_runtime: RuntimeFactory, workspace: Path
) -> None:
    async def echo(arguments: Any, context: ToolContext) -> Any:
        return arguments

    services = FakeServices(workspace, [tool("echo", echo)])
    lane = NestedLane(services, outer_context(services).call)
    code = (
        "caught = []\n"
        "for bad in (float('nan'), {1: 2}, b'x', 2**70):\n"
        "    try:\n"
        "        await tools.echo(value=bad)\n"
        "    except TypeError as error:\n"
        "        caught.append(str(error))\n"
        "return caught\n"
    )
    outcome = await make_runtime().run(code, workspace=workspace, tool_names=("echo",), lane=lane)
    assert outcome.ok, outcome.to_json()
    assert len(outcome.value) == 4
    assert all("not lossless JSON" in text for text in outcome.value)
    assert services.dispatched == []


@pytest.mark.asyncio
async def test_non_lossless_tool_result_reaches_the_program_as_tool_call_error(
    make_runtime: RuntimeFactory, workspace: Path
) -> None:
    async def broken(arguments: Any, context: ToolContext) -> Any:
        return {"x": math.nan}

    services = FakeServices(workspace, [tool("broken", broken)])
    lane = NestedLane(services, outer_context(services).call)
    code = "try:\n    await tools.broken()\nexcept ToolCallError as error:\n    return [error.tool_name, error.code]\n"
    outcome = await make_runtime().run(code, workspace=workspace, tool_names=("broken",), lane=lane)
    assert outcome.value == ["broken", "invalid-result"]


@pytest.mark.asyncio
async def test_result_flagged_as_error_raises_tool_call_error(make_runtime: RuntimeFactory, workspace: Path) -> None:
    class FlaggingServices(FakeServices):
        async def dispatch(self, call: Any) -> Any:
            result = await super().dispatch(call)
            return attrs.evolve(result, metadata={"is_error": True})

    async def mcp_like(arguments: Any, context: ToolContext) -> Any:
        return {"content": "upstream failed"}

    services = FlaggingServices(workspace, [tool("mcp_like", mcp_like)])
    lane = NestedLane(services, outer_context(services).call)
    code = "try:\n    await tools.mcp_like()\nexcept ToolCallError as error:\n    return error.tool_name\n"
    outcome = await make_runtime().run(code, workspace=workspace, tool_names=("mcp_like",), lane=lane)
    assert outcome.value == "mcp_like"
