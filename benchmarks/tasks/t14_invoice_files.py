"""t14 — find and aggregate across many files: October's invoiced amount over 24 CSV files."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from hookspecs.types import JSONValue
from ptc_plus.evaluation.task import Answer, EndState, Task, Verdict
from ptc_plus.evaluation.task_plan import Item, Ref, Step, TaskPlan, Turn, derive

from .oracles import amounts, has_number, only, verdict

FOLDER = "data/invoices"
MONTH = "2026-10"
PROMPT = f"What is the total amount invoiced in October 2026, over all the CSV files in {FOLDER}?"


def setup(workspace: Path, world: Any) -> None:
    rng = random.Random(1514)
    folder = workspace / FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    for number in range(1, 25):
        rows = ["date,customer_id,amount"]
        for _ in range(rng.randint(8, 20)):
            month, day = rng.choice((9, 10, 10, 11)), rng.randint(1, 28)
            rows.append(f"2026-{month:02d}-{day:02d},c-{rng.randint(1, 60):03d},{rng.uniform(20, 900):.2f}")
        (folder / f"batch-{number:02d}.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    (folder / "README.txt").write_text("One CSV per billing batch.\n", encoding="utf-8")


def month_total(lines: list[str]) -> float:
    return sum(float(line.split(",")[2]) for line in lines[1:] if line.startswith(MONTH))


def _answer(files: int, total: float) -> Answer:
    return Answer(text=f"Over {files} CSV files, October 2026 invoices total {total:.2f} EUR.")


def oracle(answer: str, end: EndState) -> Verdict:
    total = round(
        sum(month_total(p.read_text(encoding="utf-8").splitlines()) for p in (end.workspace / FOLDER).glob("*.csv")), 2
    )
    wrong = only(amounts(answer, "EUR"), [total], 0.011)
    return verdict(
        answer,
        [
            (has_number(answer, total, 0.011), f"the total {total:.2f} is missing"),
            (not wrong, f"other totals: {wrong}"),
        ],
    )


def _count(entries: list[Any]) -> JSONValue:
    return len(entries)


def _october_total(tables: list[Any]) -> JSONValue:
    total = 0.0
    for table in tables:
        total += sum(float(row.split(",")[2]) for row in table["lines"][1:] if row.startswith("2026-10"))
    return round(total, 2)


def _plan_answer(values: tuple[JSONValue, ...]) -> str:
    files, total = values
    return _answer(int(str(files)), float(str(total))).text


PLAN = TaskPlan(
    turns=(
        Turn(
            prompt=PROMPT,
            steps=(
                Step(
                    id="listing",
                    need=f"the CSV files in the folder {FOLDER}",
                    tool="list_files",
                    arguments={"path": FOLDER, "pattern": "*.csv"},
                ),
                Step(
                    id="tables",
                    need="read a CSV file",
                    tool="read_file",
                    arguments={"path": Item(("path",))},
                    each=Ref("listing", ("entries",)),
                ),
            ),
            reads=(derive(Ref("listing", ("entries",)), _count), derive(Ref("tables"), _october_total)),
            answer=_plan_answer,
        ),
    )
)


TASK = Task(
    id="t14-invoice-files",
    category="find-count",
    prompt=PROMPT,
    setup=setup,
    oracle=oracle,
    plan=PLAN,
)
