"""t02 — aggregate 200 records fetched by id: delivered orders' revenue among o-0001..o-0200."""

from __future__ import annotations

from collections.abc import Generator
from pathlib import Path
from typing import Any

from hookspecs.types import JSONValue
from ptc_plus.evaluation.task import Action, Answer, Call, EndState, Observation, Program, Task, Verdict
from ptc_plus.evaluation.task_plan import Ref, Step, TaskPlan, Turn

from .derived import derive
from .oracles import amounts, has_number, only, verdict
from .world import queries

COUNT = 200
PROMPT = (
    f"Fetch orders o-0001 through o-{COUNT:04d} and tell me how many of them were delivered "
    "and the total revenue in EUR (the sum of their order totals) of those delivered orders."
)


def setup(workspace: Path, world: Any) -> None:
    """Nothing to write: the orders live in the records service."""


def _answer(delivered: int, revenue: float) -> Answer:
    return Answer(text=f"{delivered} of the {COUNT} orders were delivered; their revenue is {revenue:.2f} EUR.")


def native() -> Generator[Action, Observation, None]:
    delivered, revenue = 0, 0.0
    for number in range(1, COUNT + 1):
        order: Any = (yield Call(tool="get_order", arguments={"order_id": f"o-{number:04d}"})).value
        if order["status"] == "delivered":
            delivered += 1
            revenue += order["total"]
    yield _answer(delivered, round(revenue, 2))


CODE = f"""import asyncio
ids = [f"o-{{n:04d}}" for n in range(1, {COUNT + 1})]
orders = await asyncio.gather(*(tools.get_order(order_id=i) for i in ids))
delivered = [o for o in orders if o["status"] == "delivered"]
return {{"delivered": len(delivered), "revenue": round(sum(o["total"] for o in delivered), 2)}}"""


def code() -> Generator[Action, Observation, None]:
    result: Any = (yield Program(code=CODE, description="Sum delivered orders' totals", uses=("get_order",))).value
    yield _answer(result["delivered"], result["revenue"])


def oracle(answer: str, end: EndState) -> Verdict:
    orders = [end.world.data.orders[f"o-{n:04d}"] for n in range(1, COUNT + 1)]
    delivered = [o for o in orders if o["status"] == "delivered"]
    revenue = round(sum(o["total"] for o in delivered), 2)
    wrong = only(amounts(answer, "EUR"), [revenue], 0.011)
    return verdict(
        answer,
        [
            (has_number(answer, len(delivered)), f"the count {len(delivered)} is missing"),
            (has_number(answer, revenue, 0.011), f"the revenue {revenue:.2f} is missing"),
            (not wrong, f"other amounts stated: {wrong}"),
        ],
    )


def _delivered_revenue(*orders: Any) -> JSONValue:
    delivered = [order for order in orders if order["status"] == "delivered"]
    return {"delivered": len(delivered), "revenue": round(sum(order["total"] for order in delivered), 2)}


def _plan_answer(values: tuple[JSONValue, ...]) -> str:
    found: Any = values[0]
    return _answer(found["delivered"], found["revenue"]).text


# The user names the 200 ids: 200 independent steps (a native model sends them in one response).
ORDER_STEPS = tuple(
    Step(
        id=f"order-{number:04d}",
        need=f"the status and total of order o-{number:04d}",
        tool="get_order",
        arguments={"order_id": f"o-{number:04d}"},
    )
    for number in range(1, COUNT + 1)
)
PLAN = TaskPlan(
    turns=(
        Turn(
            prompt=PROMPT,
            steps=ORDER_STEPS,
            reads=(derive(tuple(Ref(step.id) for step in ORDER_STEPS), _delivered_revenue),),
            answer=_plan_answer,
        ),
    )
)


TASK = Task(
    id="t02-aggregate-orders",
    category="aggregate",
    prompt=PROMPT,
    setup=setup,
    native=native,
    code=code,
    oracle=oracle,
    queries=queries("get_order"),
)
