"""t07 — a child agent: the parent delegates a search to a sub-agent through the ``agent`` tool."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hookspecs.types import JSONValue
from ptc_plus.evaluation.task import Answer, EndState, Task, Verdict
from ptc_plus.evaluation.task_plan import Item, Ref, Step, TaskPlan, Turn, derive

from .oracles import amounts, has_number, ids, only, verdict

PROMPT = (
    "Ask a sub-agent to find which monitor in our catalog has the most reviews, then tell me that monitor's name "
    "and price."
)
CHILD_PROMPT = (
    "Which product in the 'monitors' category has the most reviews? Answer with its product id and review count."
)


def setup(workspace: Path, world: Any) -> None:
    """Nothing to write: the products live in the catalog service."""


def _child_answer(best: Any) -> Answer:
    return Answer(text=f"{best['id']} has the most reviews ({best['reviews']}).")


def _child_text(value: Any) -> str:
    return str(value["answer"]) if isinstance(value, dict) and "answer" in value else str(value)


def _answer(product: Any) -> Answer:
    return Answer(
        text=f"The most-reviewed monitor is {product['name']} ({product['id']}), priced {product['price']:.2f} EUR."
    )


def oracle(answer: str, end: EndState) -> Verdict:
    monitors = [p for p in end.world.data.products.values() if p["category"] == "monitors"]
    best = max(monitors, key=lambda p: p["reviews"])
    others = [p["name"] for p in monitors if p["id"] != best["id"] and p["name"] not in best["name"]]
    return verdict(
        answer,
        [
            (best["name"] in answer, f"the name {best['name']!r} is missing"),
            (has_number(answer, best["price"]), f"the price {best['price']} is missing"),
            (not [n for n in others if n in answer], "other monitors named"),
            (ids(answer, "p") <= {best["id"]}, f"other products named: {sorted(ids(answer, 'p') - {best['id']})}"),
            (not only(amounts(answer, "EUR"), [best["price"]]), "other prices stated"),
            # The task is to delegate: a child session (not the root) must have searched the catalog.
            (end.world.child_calls["search_products"] > 0, "no child agent searched the catalog"),
        ],
    )


def _most_reviewed(products: list[Any]) -> JSONValue:
    best = max(products, key=lambda p: p["reviews"])
    return {"id": best["id"], "reviews": best["reviews"]}


def _product_id(answer: str) -> JSONValue:
    import re

    match = re.search(r"p-\d{3}", answer)
    if match is None:
        raise ValueError(f"the sub-agent named no product: {answer!r}")
    return match.group()


def _child_plan_answer(values: tuple[JSONValue, ...]) -> str:
    return _child_answer(values[0]).text


def _plan_answer(values: tuple[JSONValue, ...]) -> str:
    return _answer(values[0]).text


CHILD_PLAN = TaskPlan(
    turns=(
        Turn(
            prompt=CHILD_PROMPT,
            steps=(
                Step(
                    id="monitors",
                    need="all monitors in our product catalog",
                    tool="search_products",
                    arguments={"category": "monitors"},
                ),
                Step(
                    id="details",
                    need="how many reviews a product has",
                    tool="get_product",
                    arguments={"product_id": Item(("id",))},
                    each=Ref("monitors", ("products",)),
                ),
            ),
            reads=(derive(Ref("details"), _most_reviewed),),
            answer=_child_plan_answer,
        ),
    )
)
"""What the sub-agent does: the policy runs it in the child session the ``agent`` step starts."""

PLAN = TaskPlan(
    turns=(
        Turn(
            prompt=PROMPT,
            steps=(
                Step(
                    id="delegate",
                    need="hand a search to a sub-agent",
                    tool="agent",
                    arguments={"prompt": CHILD_PROMPT},
                    child=CHILD_PLAN,
                ),
                Step(
                    id="product",
                    need="the name and price of the product the sub-agent found",
                    tool="get_product",
                    arguments={"product_id": derive(Ref("delegate", ("answer",)), _product_id)},
                ),
            ),
            reads=(Ref("product"),),
            answer=_plan_answer,
        ),
    )
)


TASK = Task(
    id="t07-child-agent",
    category="child",
    prompt=PROMPT,
    setup=setup,
    oracle=oracle,
    plan=PLAN,
)
