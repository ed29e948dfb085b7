"""t04 — pick the best of N candidates: the best-rated headphones (ties: the cheapest)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hookspecs.types import JSONValue
from ptc_plus.evaluation.task import Answer, EndState, Task, Verdict
from ptc_plus.evaluation.task_plan import Item, Ref, Step, TaskPlan, Turn, derive

from .oracles import amounts, has_number, ids, only, verdict

PROMPT = (
    "Which headphones in our catalog have the best average rating? If several tie, take the cheapest. "
    "Give the product id, name, rating and price."
)


def setup(workspace: Path, world: Any) -> None:
    """Nothing to write: the products live in the catalog service."""


def _answer(best: Any) -> Answer:
    return Answer(
        text=f"The best-rated headphones are {best['id']} ({best['name']}): rated {best['rating']}, "
        f"priced {best['price']:.2f} EUR."
    )


def oracle(answer: str, end: EndState) -> Verdict:
    candidates = [p for p in end.world.data.products.values() if p["category"] == "headphones"]
    best = min(candidates, key=lambda p: (-p["rating"], p["price"]))
    others = {p["id"] for p in candidates} - {best["id"]}
    named = ids(answer, "p") | {p["id"] for p in candidates if p["name"] in answer}
    wrong = only(amounts(answer, "EUR"), [best["price"]])
    return verdict(
        answer,
        [
            (best["id"] in answer, f"the product id {best['id']} is missing"),
            (has_number(answer, best["price"]), f"the price {best['price']} is missing"),
            (not named & others, f"other headphones named: {sorted(named & others)}"),
            (not named - others - {best["id"]}, f"products that are not headphones named: {sorted(named - others)}"),
            (not wrong, f"other prices stated: {wrong}"),
        ],
    )


def _best(products: list[Any]) -> JSONValue:
    best: JSONValue = min(products, key=lambda p: (-p["rating"], p["price"]))
    return best


def _plan_answer(values: tuple[JSONValue, ...]) -> str:
    return _answer(values[0]).text


PLAN = TaskPlan(
    turns=(
        Turn(
            prompt=PROMPT,
            steps=(
                Step(
                    id="headphones",
                    need="all headphones in our product catalog",
                    tool="search_products",
                    arguments={"category": "headphones"},
                ),
                Step(
                    id="details",
                    need="a product's average rating and price",
                    tool="get_product",
                    arguments={"product_id": Item(("id",))},
                    each=Ref("headphones", ("products",)),
                ),
            ),
            reads=(derive(Ref("details"), _best),),
            answer=_plan_answer,
        ),
    )
)


TASK = Task(
    id="t04-best-headphones",
    category="best-of-n",
    prompt=PROMPT,
    setup=setup,
    oracle=oracle,
    plan=PLAN,
)
