"""t08 — recovery from a tool error: the inventory service fails the first call of every run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hookspecs.types import JSONValue
from ptc_plus.evaluation.task import Answer, EndState, Task, Verdict
from ptc_plus.evaluation.task_plan import Ref, Step, TaskPlan, Turn

from .oracles import amounts, has_number, only, verdict

PRODUCT = "p-012"
PROMPT = f"How many units of product {PRODUCT} do we have in stock across all warehouses?"


def setup(workspace: Path, world: Any) -> None:
    """Nothing to write: the stock lives in the inventory service."""


def _answer(warehouses: Any) -> Answer:
    detail = ", ".join(f"{name} {count}" for name, count in sorted(warehouses.items()))
    return Answer(text=f"{sum(warehouses.values())} units of {PRODUCT} are in stock ({detail}).")


def oracle(answer: str, end: EndState) -> Verdict:
    total = sum(end.world.data.stock[PRODUCT].values())
    wrong = only(amounts(answer, "units"), [total])
    return verdict(
        answer,
        [
            (has_number(answer, total), f"the total {total} is missing"),
            (not wrong, f"other unit counts stated as the total: {wrong}"),
            (end.world.calls["warehouse_stock"] >= 2, "the run never met (and recovered from) the outage"),
        ],
    )


def _plan_answer(values: tuple[JSONValue, ...]) -> str:
    return _answer(values[0]).text


PLAN = TaskPlan(
    turns=(
        Turn(
            prompt=PROMPT,
            steps=(
                Step(
                    id="stock",
                    need=f"units of {PRODUCT} in stock in each warehouse",
                    tool="warehouse_stock",
                    arguments={"product_id": PRODUCT},
                    retries=1,  # the inventory service's first answer of a run is a 503 "try again"
                ),
            ),
            reads=(Ref("stock", ("warehouses",)),),
            answer=_plan_answer,
        ),
    )
)


TASK = Task(
    id="t08-flaky-stock",
    category="recovery",
    prompt=PROMPT,
    setup=setup,
    oracle=oracle,
    plan=PLAN,
)
