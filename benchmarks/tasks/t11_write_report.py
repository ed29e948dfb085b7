"""t11 — changes state: writes a report file; the oracle checks the file, not only the answer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hookspecs.types import JSONValue
from ptc_plus.evaluation.task import Answer, EndState, Task, Verdict
from ptc_plus.evaluation.task_plan import Ref, Step, TaskPlan, Turn, derive

from .oracles import has_number, numbers, only, verdict

CUSTOMER = "c-049"
REPORT = f"reports/{CUSTOMER}-shipped.txt"
PROMPT = (
    f"Write the ids of all shipped orders of customer {CUSTOMER}, one per line, to {REPORT}, "
    "and tell me how many there are."
)


def setup(workspace: Path, world: Any) -> None:
    """Nothing to write: the report is the task's output."""


def _answer(count: int) -> Answer:
    return Answer(text=f"Wrote {count} shipped order ids of {CUSTOMER} to {REPORT}.")


def oracle(answer: str, end: EndState) -> Verdict:
    expected = [
        oid for oid, o in end.world.data.orders.items() if o["customer_id"] == CUSTOMER and o["status"] == "shipped"
    ]
    report = end.workspace / REPORT
    written = report.read_text(encoding="utf-8").split() if report.is_file() else None
    return verdict(
        answer,
        [
            (written is not None, f"{REPORT} was not written"),
            (written is None or sorted(written) == sorted(expected), f"{REPORT} holds {written}, not {expected}"),
            (has_number(answer, len(expected)), f"the count {len(expected)} is missing"),
            (not only(numbers(answer), [len(expected)]), "another count stated"),
        ],
    )


def _report_text(order_ids: list[str]) -> JSONValue:
    return "\n".join(order_ids) + "\n"


def _count(order_ids: list[str]) -> JSONValue:
    return len(order_ids)


def _plan_answer(values: tuple[JSONValue, ...]) -> str:
    return _answer(int(str(values[0]))).text


PLAN = TaskPlan(
    turns=(
        Turn(
            prompt=PROMPT,
            steps=(
                Step(
                    id="shipped",
                    need=f"the shipped orders of customer {CUSTOMER}",
                    tool="list_order_ids",
                    arguments={"customer_id": CUSTOMER, "status": "shipped"},
                ),
                Step(
                    id="report",
                    need=f"save a text file at {REPORT}",
                    tool="write_file",
                    arguments={"path": REPORT, "content": derive(Ref("shipped", ("order_ids",)), _report_text)},
                ),
            ),
            reads=(derive(Ref("shipped", ("order_ids",)), _count),),
            answer=_plan_answer,
        ),
    )
)


TASK = Task(
    id="t11-write-report",
    category="state",
    prompt=PROMPT,
    setup=setup,
    oracle=oracle,
    plan=PLAN,
)
