"""t16 — an ordinary file-plus-tool task: total parcel weight, read in pounds, reported in kilograms."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from hookspecs.types import JSONValue
from ptc_plus.evaluation.task import Answer, EndState, Task, Verdict
from ptc_plus.evaluation.task_plan import Ref, Step, TaskPlan, Turn, derive

from .oracles import amounts, has_number, only, verdict

PARCELS = "data/parcels.csv"
PROMPT = f"{PARCELS} lists parcel weights in pounds. What is their total weight in kilograms?"


def setup(workspace: Path, world: Any) -> None:
    rng = random.Random(1516)
    rows = ["parcel,weight_lb"] + [f"P{n:03d},{rng.uniform(0.5, 40):.1f}" for n in range(1, 31)]
    (workspace / "data").mkdir(exist_ok=True)
    (workspace / PARCELS).write_text("\n".join(rows) + "\n", encoding="utf-8")


def pounds(lines: list[str]) -> float:
    return round(sum(float(line.split(",")[1]) for line in lines[1:] if line.strip()), 1)


def _answer(lb: float, kg: float) -> Answer:
    return Answer(text=f"The parcels weigh {lb:.1f} lb in total, which is {kg:.2f} kg.")


def oracle(answer: str, end: EndState) -> Verdict:
    kg = round(pounds((end.workspace / PARCELS).read_text(encoding="utf-8").splitlines()) * 0.45359237, 2)
    wrong = only(amounts(answer, "kg"), [kg], 0.011)
    return verdict(
        answer, [(has_number(answer, kg, 0.011), f"{kg} kg is missing"), (not wrong, f"other weights in kg: {wrong}")]
    )


def _pounds(lines: list[str]) -> JSONValue:
    return round(sum(float(line.split(",")[1]) for line in lines[1:] if line.strip()), 1)


def _plan_answer(values: tuple[JSONValue, ...]) -> str:
    lb, kg = values
    return _answer(float(str(lb)), float(str(kg))).text


_POUNDS = derive(Ref("parcels", ("lines",)), _pounds)
PLAN = TaskPlan(
    turns=(
        Turn(
            prompt=PROMPT,
            steps=(
                Step(
                    id="parcels",
                    need=f"read the parcel list in {PARCELS}",
                    tool="read_file",
                    arguments={"path": PARCELS},
                ),
                Step(
                    id="kg",
                    need="convert a weight from pounds to kilograms",
                    tool="convert_units",
                    arguments={"value": _POUNDS, "from_unit": "lb", "to_unit": "kg"},
                ),
            ),
            reads=(_POUNDS, Ref("kg", ("value",))),
            answer=_plan_answer,
        ),
    )
)


TASK = Task(
    id="t16-parcel-weights",
    category="ordinary",
    prompt=PROMPT,
    setup=setup,
    oracle=oracle,
    plan=PLAN,
)
