"""t15 — fetch and filter: which customers in one country are gold tier (search gives ids, details by id)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hookspecs.types import JSONValue
from ptc_plus.evaluation.task import Answer, EndState, Task, Verdict
from ptc_plus.evaluation.task_plan import Item, Ref, Step, TaskPlan, Turn, derive

from .oracles import amounts, has_number, ids, only, verdict

COUNTRY = "NL"
PROMPT = "How many of our customers in the Netherlands are gold tier? Name them."


def setup(workspace: Path, world: Any) -> None:
    """Nothing to write: the customers live in the records service."""


def _answer(gold: list[Any]) -> Answer:
    names = ", ".join(f"{c['name']} ({c['id']})" for c in gold)
    return Answer(text=f"{len(gold)} customers in the Netherlands are gold tier: {names}.")


def oracle(answer: str, end: EndState) -> Verdict:
    local = [c for c in end.world.data.customers.values() if c["country"] == COUNTRY]
    gold = [c for c in local if c["tier"] == "gold"]
    missing = [c["id"] for c in gold if c["id"] not in answer and c["name"] not in answer]
    gold_names = {c["name"] for c in gold}
    wrong = sorted(
        {c["id"] for c in local if c["tier"] != "gold" and c["name"] not in gold_names and c["name"] in answer}
        | (ids(answer, "c") - {c["id"] for c in gold})
    )
    counts = only(amounts(answer, "customers"), [len(gold)])
    return verdict(
        answer,
        [
            (has_number(answer, len(gold)), f"the count {len(gold)} is missing"),
            (not missing, f"not named: {missing}"),
            (not wrong, f"customers who are not gold in {COUNTRY} named: {wrong}"),
            (not counts, f"other counts of customers stated: {counts}"),
        ],
    )


def _gold(customers: list[Any]) -> JSONValue:
    return [{"id": c["id"], "name": c["name"]} for c in customers if c["tier"] == "gold"]


def _plan_answer(values: tuple[JSONValue, ...]) -> str:
    gold: Any = values[0]
    return _answer(list(gold)).text


PLAN = TaskPlan(
    turns=(
        Turn(
            prompt=PROMPT,
            steps=(
                Step(
                    id="dutch",
                    need="our customers in the Netherlands",
                    tool="search_customers",
                    arguments={"country": COUNTRY},
                ),
                Step(
                    id="details",
                    need="a customer's loyalty tier",
                    tool="get_customer",
                    arguments={"customer_id": Item(("id",))},
                    each=Ref("dutch", ("customers",)),
                ),
            ),
            reads=(derive(Ref("details"), _gold),),
            answer=_plan_answer,
        ),
    )
)


TASK = Task(
    id="t15-gold-customers",
    category="fetch-filter",
    prompt=PROMPT,
    setup=setup,
    oracle=oracle,
    plan=PLAN,
)
