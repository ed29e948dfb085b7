"""A tiny suite for the engine's tests: three world tools, a few tasks, generated filler.

Not the real suite (``benchmarks/tasks``): just enough to run every style for real —
a one-call task, a long-tail task needing a tool a small budget keeps on demand, a
child-agent task, an MCP task, and warm-up tasks that all use the long-tail tool.
"""

from __future__ import annotations

import datetime
from collections.abc import Generator
from pathlib import Path
from typing import Any

import attrs

from hookspecs import JSONObject, JSONValue, ToolContext, ToolDefinition, ToolFailure, ToolSpec
from hookspecs.services import tool
from ptc_plus.evaluation.task import (
    Action,
    Answer,
    Call,
    EndState,
    Observation,
    Program,
    Suite,
    Task,
    Verdict,
)

ORDERS = {1: 10.25, 2: 5.5, 3: 7.0}
FORECAST = {"Oslo": "snow", "Lima": "sun"}


@attrs.define
class World:
    notes: list[str] = attrs.field(factory=list)
    filler_calls: int = 0


def world(workspace: Path) -> World:
    return World()


def tools(workspace: Path, state: Any) -> list[ToolDefinition]:
    assert isinstance(state, World)

    @tool(
        "lookup_order",
        description="Look up one order by its id: its total in euros.",
        input_schema={
            "type": "object",
            "properties": {"order_id": {"type": "integer"}},
            "required": ["order_id"],
        },
    )
    async def lookup_order(arguments: JSONObject, context: ToolContext) -> JSONValue:
        order_id = arguments["order_id"]
        if order_id not in ORDERS:
            raise ToolFailure("no-order", f"no order {order_id}")
        return {"id": order_id, "total": ORDERS[int(str(order_id))]}

    @tool(
        "add_note",
        description="Add a note to the notebook.",
        input_schema={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    )
    async def add_note(arguments: JSONObject, context: ToolContext) -> JSONValue:
        state.notes.append(str(arguments["text"]))
        return {"id": len(state.notes)}

    @tool(
        "weather_forecast",
        description="Weather forecast for a city: tomorrow's sky.",
        input_schema={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    )
    async def weather_forecast(arguments: JSONObject, context: ToolContext) -> JSONValue:
        return {"city": arguments["city"], "sky": FORECAST.get(str(arguments["city"]), "clouds")}

    return [lookup_order, add_note, weather_forecast]


def filler(n: int) -> list[ToolSpec]:
    topics = ("invoice", "calendar", "ticket", "repository", "printer", "playlist", "vehicle", "recipe")
    return [
        ToolSpec(
            name=f"manage_{topics[i % len(topics)]}_{i}",
            description=f"Manage {topics[i % len(topics)]} records, variant {i}.",
            input_schema={"type": "object", "properties": {"record_id": {"type": "string"}}},
        )
        for i in range(n)
    ]


def _nothing(workspace: Path, state: Any) -> None:
    return None


def _equals(expected: str) -> Any:
    def oracle(answer: str, end: EndState) -> Verdict:
        return Verdict(passed=answer == expected, reason="" if answer == expected else f"{answer!r} != {expected!r}")

    return oracle


Gen = Generator[Action, Observation, None]

# -- one call -------------------------------------------------------------------------


def one_call_native() -> Gen:
    seen = yield Call(tool="lookup_order", arguments={"order_id": 2})
    assert seen.ok and isinstance(seen.value, dict)
    yield Answer(text=f"{seen.value['total']:g}")


def one_call_code() -> Gen:
    seen = yield Program(
        code="return (await tools.lookup_order(order_id=2))['total']", description="order 2", uses=("lookup_order",)
    )
    assert seen.ok and isinstance(seen.value, float)
    yield Answer(text=f"{seen.value:g}")


QUERIES = {
    "lookup_order": "look up an order by id",
    "weather_forecast": "weather forecast for a city",
    "add_note": "add a note",
    "agent": "start a child agent",
    "get_current_time": "current time in a timezone",
}

ONE_CALL = Task(
    id="x01-one-call",
    category="one-call",
    prompt="What is the total of order 2?",
    setup=_nothing,
    native=one_call_native,
    code=one_call_code,
    oracle=_equals(f"{ORDERS[2]:g}"),
    queries=QUERIES,
)

# -- long tail: a tool a small budget keeps on demand ------------------------------------


def forecast_native(city: str) -> Any:
    def script() -> Gen:
        seen = yield Call(tool="weather_forecast", arguments={"city": city})
        assert seen.ok and isinstance(seen.value, dict)
        yield Answer(text=str(seen.value["sky"]))

    return script


def forecast_code(city: str) -> Any:
    def script() -> Gen:
        seen = yield Program(
            code=f"return (await tools.weather_forecast(city={city!r}))['sky']",
            description="forecast",
            uses=("weather_forecast",),
        )
        assert seen.ok, seen.error
        yield Answer(text=str(seen.value))

    return script


def forecast_task(task_id: str, city: str) -> Task:
    return Task(
        id=task_id,
        category="long-tail",
        prompt=f"What sky is forecast in {city}?",
        setup=_nothing,
        native=forecast_native(city),
        code=forecast_code(city),
        oracle=_equals(FORECAST.get(city, "clouds")),
        queries=QUERIES,
    )


LONG_TAIL = forecast_task("x02-long-tail", "Oslo")

# -- child agent ------------------------------------------------------------------------


def child_native() -> Gen:
    total = 0.0
    for order_id in (1, 3):
        seen = yield Call(tool="lookup_order", arguments={"order_id": order_id})
        assert seen.ok and isinstance(seen.value, dict)
        total += float(seen.value["total"])
    yield Answer(text=f"{total:g}")


def child_code() -> Gen:
    seen = yield Program(
        code="total = 0\nfor i in (1, 3):\n    total += (await tools.lookup_order(order_id=i))['total']\nreturn total",
        description="sum",
        uses=("lookup_order",),
    )
    assert seen.ok, seen.error
    yield Answer(text=f"{seen.value:g}")


def parent_native() -> Gen:
    seen = yield Call(tool="agent", arguments={"prompt": "Sum the totals of orders 1 and 3."})
    assert seen.ok and isinstance(seen.value, dict), seen.error
    answer = str(seen.value["answer"])
    noted = yield Call(tool="add_note", arguments={"text": f"orders 1+3: {answer}"})
    assert noted.ok
    yield Answer(text=answer)


def parent_code() -> Gen:
    seen = yield Program(
        code=(
            "answer = (await tools.agent(prompt='Sum the totals of orders 1 and 3.'))['answer']\n"
            "await tools.add_note(text=f'orders 1+3: {answer}')\n"
            "return answer"
        ),
        description="delegate",
        uses=("agent", "add_note"),
    )
    assert seen.ok, seen.error
    yield Answer(text=str(seen.value))


def child_oracle(answer: str, end: EndState) -> Verdict:
    expected = f"{ORDERS[1] + ORDERS[3]:g}"
    if answer != expected:
        return Verdict(passed=False, reason=f"{answer!r} != {expected!r}")
    if end.world.notes != [f"orders 1+3: {expected}"]:
        return Verdict(passed=False, reason=f"notes: {end.world.notes!r}")
    return Verdict(passed=True)


CHILD = Task(
    id="x03-child",
    category="child",
    prompt="Have a helper sum orders 1 and 3, note the sum, and tell me.",
    setup=_nothing,
    native=parent_native,
    code=parent_code,
    oracle=child_oracle,
    queries=QUERIES,
    child_native=child_native,
    child_code=child_code,
)

# -- MCP ----------------------------------------------------------------------------------


def mcp_native() -> Gen:
    seen = yield Call(tool="get_current_time", arguments={"timezone": "UTC"})
    assert seen.ok and isinstance(seen.value, dict), seen.error
    yield Answer(text=str(seen.value["day_of_week"]))


def mcp_code() -> Gen:
    seen = yield Program(
        code="return (await tools.get_current_time(timezone='UTC'))['day_of_week']",
        description="today",
        uses=("get_current_time",),
    )
    assert seen.ok, seen.error
    yield Answer(text=str(seen.value))


def mcp_oracle(answer: str, end: EndState) -> Verdict:
    today = datetime.datetime.now(datetime.UTC)
    # Either side of midnight: the server answered a moment before the oracle looked.
    days = {(today - datetime.timedelta(minutes=m)).strftime("%A") for m in (0, 5)}
    return Verdict(passed=answer in days, reason="" if answer in days else f"{answer!r} not in {days}")


MCP = Task(
    id="x04-mcp",
    category="mcp",
    prompt="What day of the week is it in UTC?",
    setup=_nothing,
    native=mcp_native,
    code=mcp_code,
    oracle=mcp_oracle,
    queries=QUERIES,
)

SUITE = Suite(
    version="test-1",
    tasks=(ONE_CALL, LONG_TAIL, CHILD, MCP),
    warmup=(forecast_task("w01-lima", "Lima"), forecast_task("w02-rome", "Rome")),
    world=world,
    tools=tools,
    filler=filler,
)
OWN_TOOLS = 3 + 2 + 1
"""World tools, the time server's two, ``agent``."""
