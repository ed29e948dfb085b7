"""t13 — long tail, multi-step: ship an order's items to its customer's country (``shipping_quote`` on demand)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hookspecs.types import JSONValue
from ptc_plus.evaluation.task import Answer, EndState, Task, Verdict
from ptc_plus.evaluation.task_plan import Item, Ref, Step, TaskPlan, Turn, derive

from .oracles import amounts, has_number, only, verdict

ORDER = "o-0088"
PROMPT = (
    f"What would standard shipping of order {ORDER} to its customer's country cost? "
    "The parcel weighs what its items weigh together."
)


def setup(workspace: Path, world: Any) -> None:
    """Nothing to write: everything is in the services."""


def _answer(country: str, weight: float, price: float) -> Answer:
    return Answer(text=f"Shipping order {ORDER} ({weight:.2f} kg) to {country} costs {price:.2f} EUR.")


def oracle(answer: str, end: EndState) -> Verdict:
    from .world import shipping_price

    data = end.world.data
    order = data.orders[ORDER]
    weight = round(sum(i["quantity"] * data.products[i["product_id"]]["weight_kg"] for i in order["items"]), 2)
    price = shipping_price(data.customers[order["customer_id"]]["country"], weight)
    wrong = only(amounts(answer, "EUR"), [price])
    return verdict(
        answer,
        [(has_number(answer, price), f"the price {price:.2f} is missing"), (not wrong, f"other prices: {wrong}")],
    )


def _weight(items: list[Any], products: list[Any]) -> JSONValue:
    total = sum(item["quantity"] * product["weight_kg"] for item, product in zip(items, products, strict=True))
    return round(total, 2)


def _plan_answer(values: tuple[JSONValue, ...]) -> str:
    country, weight, price = values
    return _answer(str(country), float(str(weight)), float(str(price))).text


_WEIGHT = derive((Ref("order", ("items",)), Ref("products")), _weight)
PLAN = TaskPlan(
    turns=(
        Turn(
            prompt=PROMPT,
            steps=(
                Step(
                    id="order",
                    need=f"the items of order {ORDER} and who placed it",
                    tool="get_order",
                    arguments={"order_id": ORDER},
                ),
                Step(
                    id="customer",
                    need="which country the customer lives in",
                    tool="get_customer",
                    arguments={"customer_id": Ref("order", ("customer_id",))},
                ),
                Step(
                    id="products",
                    need="how much a product weighs",
                    tool="get_product",
                    arguments={"product_id": Item(("product_id",))},
                    each=Ref("order", ("items",)),
                ),
                Step(
                    id="quote",
                    need="what standard shipping of a parcel of that weight to that country costs",
                    tool="shipping_quote",
                    arguments={"country": Ref("customer", ("country",)), "weight_kg": _WEIGHT},
                ),
            ),
            reads=(Ref("customer", ("country",)), _WEIGHT, Ref("quote", ("price",))),
            answer=_plan_answer,
        ),
    )
)


TASK = Task(
    id="t13-shipping-quote",
    category="long-tail",
    prompt=PROMPT,
    setup=setup,
    oracle=oracle,
    plan=PLAN,
)
