"""t02 — aggregate 200 records fetched by id: delivered orders' revenue among o-0001..o-0200."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hookspecs.types import JSONValue
from ptc_plus.evaluation.task import Answer, EndState, Task, Verdict
from ptc_plus.evaluation.task_plan import Item, Ref, Step, TaskPlan, Turn, derive

from .oracles import amounts, has_number, only, verdict

COUNT = 200
PROMPT = (
    f"Fetch orders o-0001 through o-{COUNT:04d} and tell me how many of them were delivered "
    "and the total revenue in EUR (the sum of their order totals) of those delivered orders."
)


def setup(workspace: Path, world: Any) -> None:
    """Nothing to write: the orders live in the records service."""


def _answer(delivered: int, revenue: float) -> Answer:
    return Answer(text=f"{delivered} of the {COUNT} orders were delivered; their revenue is {revenue:.2f} EUR.")


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


def _delivered_revenue(orders: list[Any]) -> JSONValue:
    delivered = [order for order in orders if order["status"] == "delivered"]
    return {"delivered": len(delivered), "revenue": round(sum(order["total"] for order in delivered), 2)}


def _plan_answer(values: tuple[JSONValue, ...]) -> str:
    found: Any = values[0]
    return _answer(found["delivered"], found["revenue"]).text


ORDER_IDS = tuple(f"o-{number:04d}" for number in range(1, COUNT + 1))
"""The ids the user names: one fan-out over them (a native model sends the 200 calls in one response)."""
PLAN = TaskPlan(
    turns=(
        Turn(
            prompt=PROMPT,
            steps=(
                Step(
                    id="orders",
                    need="the status and total of an order by its id",
                    tool="get_order",
                    arguments={"order_id": Item()},
                    each=ORDER_IDS,
                ),
            ),
            reads=(derive(Ref("orders"), _delivered_revenue),),
            answer=_plan_answer,
        ),
    )
)


TASK = Task(
    id="t02-aggregate-orders",
    category="aggregate",
    prompt=PROMPT,
    setup=setup,
    oracle=oracle,
    plan=PLAN,
)
