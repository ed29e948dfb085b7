"""t09 — a short one-call task (where code mode may lose): miles to kilometres."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hookspecs.types import JSONValue
from ptc_plus.evaluation.task import Answer, EndState, Task, Verdict
from ptc_plus.evaluation.task_plan import Ref, Step, TaskPlan, Turn

from .oracles import amounts, has_number, only, verdict

MILES = 26.2
PROMPT = f"How many kilometres is {MILES} miles?"


def setup(workspace: Path, world: Any) -> None:
    """Nothing to write."""


def _answer(km: float) -> Answer:
    return Answer(text=f"{MILES} miles is {km:.2f} km.")


def oracle(answer: str, end: EndState) -> Verdict:
    km = round(MILES * 1609.344 / 1000, 2)
    wrong = only(amounts(answer, "km"), [km])
    return verdict(
        answer, [(has_number(answer, km), f"{km} km is missing"), (not wrong, f"other distances stated: {wrong}")]
    )


def _plan_answer(values: tuple[JSONValue, ...]) -> str:
    return _answer(float(str(values[0]))).text


PLAN = TaskPlan(
    turns=(
        Turn(
            prompt=PROMPT,
            steps=(
                Step(
                    id="km",
                    need="convert a distance from miles to kilometres",
                    tool="convert_units",
                    arguments={"value": MILES, "from_unit": "mi", "to_unit": "km"},
                ),
            ),
            reads=(Ref("km", ("value",)),),
            answer=_plan_answer,
        ),
    )
)


TASK = Task(
    id="t09-one-call",
    category="one-call",
    prompt=PROMPT,
    setup=setup,
    oracle=oracle,
    plan=PLAN,
)
