"""A tiny suite for the engine's tests: three world tools, a few tasks, generated filler.

Not the real suite (``benchmarks/tasks``): just enough to run every style's policy for real —
a one-call task, a long-tail task needing a tool a small budget keeps on demand, a
child-agent task, an MCP task, and warm-up tasks that all use the long-tail tool.
"""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import Any

import attrs

from hookspecs import JSONObject, JSONValue, ToolContext, ToolDefinition, ToolFailure, ToolSpec
from hookspecs.services import tool
from ptc_plus.evaluation.task import EndState, Suite, Task, Verdict
from ptc_plus.evaluation.task_plan import Item, Ref, Step, TaskPlan, Turn, derive

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


def _one_turn(prompt: str, steps: tuple[Step, ...], reads: tuple[Ref, ...], answer: Any) -> TaskPlan:
    return TaskPlan(turns=(Turn(prompt=prompt, steps=steps, reads=reads, answer=answer),))


def _formatted(values: tuple[JSONValue, ...]) -> str:
    (value,) = values
    return f"{value:g}" if isinstance(value, float) else str(value)


NEEDS = {
    "lookup_order": "look up an order by id",
    "weather_forecast": "weather forecast for a city",
    "add_note": "add a note",
    "agent": "start a child agent",
    "get_current_time": "current time in a timezone",
}
"""Each tool's need as the plans word it: what a model searches with when it lacks the contract."""

# -- one call -------------------------------------------------------------------------

ONE_CALL_PROMPT = "What is the total of order 2?"
ONE_CALL = Task(
    id="x01-one-call",
    category="one-call",
    prompt=ONE_CALL_PROMPT,
    setup=_nothing,
    oracle=_equals(f"{ORDERS[2]:g}"),
    plan=_one_turn(
        ONE_CALL_PROMPT,
        (Step(id="order", need=NEEDS["lookup_order"], tool="lookup_order", arguments={"order_id": 2}),),
        (Ref("order", ("total",)),),
        _formatted,
    ),
)

# -- long tail: a tool a small budget keeps on demand ------------------------------------


def forecast_task(task_id: str, city: str) -> Task:
    prompt = f"What sky is forecast in {city}?"
    return Task(
        id=task_id,
        category="long-tail",
        prompt=prompt,
        setup=_nothing,
        oracle=_equals(FORECAST.get(city, "clouds")),
        plan=_one_turn(
            prompt,
            (Step(id="sky", need=NEEDS["weather_forecast"], tool="weather_forecast", arguments={"city": city}),),
            (Ref("sky", ("sky",)),),
            _formatted,
        ),
    )


LONG_TAIL = forecast_task("x02-long-tail", "Oslo")

# -- child agent ------------------------------------------------------------------------

CHILD_PROMPT = "Sum the totals of orders 1 and 3."


def _sum_totals(orders: list[Any]) -> JSONValue:
    return sum(order["total"] for order in orders)


def _note_text(answer: str) -> JSONValue:
    return f"orders 1+3: {answer}"


CHILD_PLAN = _one_turn(
    CHILD_PROMPT,
    (
        Step(
            id="pair",
            need=NEEDS["lookup_order"],
            tool="lookup_order",
            arguments={"order_id": Item()},
            each=(1, 3),
        ),
    ),
    (derive(Ref("pair"), _sum_totals),),
    _formatted,
)
PARENT_PROMPT = "Have a helper sum orders 1 and 3, note the sum, and tell me."


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
    prompt=PARENT_PROMPT,
    setup=_nothing,
    oracle=child_oracle,
    plan=_one_turn(
        PARENT_PROMPT,
        (
            Step(
                id="helper",
                need=NEEDS["agent"],
                tool="agent",
                arguments={"prompt": CHILD_PROMPT},
                child=CHILD_PLAN,
            ),
            Step(
                id="note",
                need=NEEDS["add_note"],
                tool="add_note",
                arguments={"text": derive(Ref("helper", ("answer",)), _note_text)},
            ),
        ),
        (Ref("helper", ("answer",)),),
        _formatted,
    ),
)

# -- MCP ----------------------------------------------------------------------------------


def mcp_oracle(answer: str, end: EndState) -> Verdict:
    today = datetime.datetime.now(datetime.UTC)
    # Either side of midnight: the server answered a moment before the oracle looked.
    days = {(today - datetime.timedelta(minutes=m)).strftime("%A") for m in (0, 5)}
    return Verdict(passed=answer in days, reason="" if answer in days else f"{answer!r} not in {days}")


MCP_PROMPT = "What day of the week is it in UTC?"
MCP = Task(
    id="x04-mcp",
    category="mcp",
    prompt=MCP_PROMPT,
    setup=_nothing,
    oracle=mcp_oracle,
    plan=_one_turn(
        MCP_PROMPT,
        (
            Step(
                id="now",
                need=NEEDS["get_current_time"],
                tool="get_current_time",
                arguments={"timezone": "UTC"},
            ),
        ),
        (Ref("now", ("day_of_week",)),),
        _formatted,
    ),
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
