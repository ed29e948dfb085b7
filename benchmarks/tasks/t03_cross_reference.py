"""t03 — cross-reference two sources: a VIP list in a CSV file against returned orders in the records service."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hookspecs.types import JSONValue
from ptc_plus.evaluation.task import Answer, EndState, Task, Verdict
from ptc_plus.evaluation.task_plan import Item, Ref, Step, TaskPlan, Turn, derive

from .oracles import ids, verdict

VIP_FILE = "crm/vip_customers.csv"
VIPS = ("c-002", "c-005", "c-010", "c-013", "c-021", "c-030", "c-033", "c-040", "c-047", "c-057")
PROMPT = f"{VIP_FILE} lists our VIP customers. Which of them have at least one returned order? Give their customer ids."


def setup(workspace: Path, world: Any) -> None:
    rows = ["customer_id,name"] + [f"{cid},{world.data.customers[cid]['name']}" for cid in VIPS]
    (workspace / "crm").mkdir(exist_ok=True)
    (workspace / VIP_FILE).write_text("\n".join(rows) + "\n", encoding="utf-8")


def _vips(lines: list[str]) -> list[str]:
    return [line.split(",")[0] for line in lines[1:] if line.strip()]


def _answer(found: list[str]) -> Answer:
    return Answer(text="VIP customers with a returned order: " + (", ".join(found) or "none") + ".")


def oracle(answer: str, end: EndState) -> Verdict:
    vips = _vips((end.workspace / VIP_FILE).read_text(encoding="utf-8").splitlines())
    returned = {o["customer_id"] for o in end.world.data.orders.values() if o["status"] == "returned"}
    expected = {cid for cid in vips if cid in returned}
    named = ids(answer, "c")
    return verdict(
        answer,
        [
            (bool(expected), "the fixture has no VIP with a returned order"),
            (expected <= named, f"missing: {sorted(expected - named)}"),
            (named <= expected, f"wrongly named: {sorted(named - expected)}"),
        ],
    )


def _vip_ids(lines: list[str]) -> JSONValue:
    return [line.split(",")[0] for line in lines[1:] if line.strip()]


def _with_returned(lines: list[str], returned: list[Any]) -> JSONValue:
    ids = [line.split(",")[0] for line in lines[1:] if line.strip()]
    return [cid for cid, found in zip(ids, returned, strict=True) if found["order_ids"]]


def _plan_answer(values: tuple[JSONValue, ...]) -> str:
    found: Any = values[0]
    return _answer(list(found)).text


PLAN = TaskPlan(
    turns=(
        Turn(
            prompt=PROMPT,
            steps=(
                Step(
                    id="vips",
                    need=f"read the VIP customer list in {VIP_FILE}",
                    tool="read_file",
                    arguments={"path": VIP_FILE},
                ),
                Step(
                    id="returned",
                    need="the returned orders of a customer",
                    tool="list_order_ids",
                    arguments={"customer_id": Item(), "status": "returned"},
                    each=derive(Ref("vips", ("lines",)), _vip_ids),
                ),
            ),
            reads=(derive((Ref("vips", ("lines",)), Ref("returned")), _with_returned),),
            answer=_plan_answer,
        ),
    )
)


TASK = Task(
    id="t03-cross-reference",
    category="cross-reference",
    prompt=PROMPT,
    setup=setup,
    oracle=oracle,
    plan=PLAN,
)
