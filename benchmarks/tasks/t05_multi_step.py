"""t05 — multi-step lookups: order → customer → their latest other order → its priciest product."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hookspecs.types import JSONValue
from ptc_plus.evaluation.task import Answer, EndState, Task, Verdict
from ptc_plus.evaluation.task_plan import Ref, Step, TaskPlan, Turn, derive

from .oracles import ids, judge, verdict

ORDER = "o-0137"
PROMPT = (
    f"Look up the customer of order {ORDER}, find that customer's most recent other order, and tell me which "
    "product in that order has the highest unit price (its id and name)."
)


def setup(workspace: Path, world: Any) -> None:
    """Nothing to write: everything is in the records service."""


def _answer(customer: str, order: str, product: Any) -> Answer:
    return Answer(
        text=f"Customer {customer}'s most recent other order is {order}; its priciest product is "
        f"{product['id']} ({product['name']}) at {product['price']:.2f} EUR."
    )


def oracle(answer: str, end: EndState) -> Verdict:
    orders = end.world.data.orders
    customer = orders[ORDER]["customer_id"]
    others = sorted(oid for oid, o in orders.items() if o["customer_id"] == customer and oid != ORDER)
    if not others:
        return judge([(False, f"the fixture gives {customer} no other order")])
    priciest = max(orders[others[-1]]["items"], key=lambda item: item["unit_price"])
    name = end.world.data.products[priciest["product_id"]]["name"]
    products = ids(answer, "p")
    return verdict(
        answer,
        [
            (priciest["product_id"] in answer, f"the product id {priciest['product_id']} is missing"),
            (name in answer, f"the product name {name!r} is missing"),
            (
                products <= {priciest["product_id"]},
                f"other products named: {sorted(products - {priciest['product_id']})}",
            ),
            (ids(answer, "o") <= {ORDER, others[-1]}, f"another order named as the latest: {sorted(ids(answer, 'o'))}"),
        ],
    )


def _latest_other(order_ids: list[str]) -> JSONValue:
    return [oid for oid in order_ids if oid != "o-0137"][-1]


def _priciest(items: list[Any]) -> JSONValue:
    return max(items, key=lambda item: item["unit_price"])["product_id"]


def _plan_answer(values: tuple[JSONValue, ...]) -> str:
    customer, order, product = values
    return _answer(str(customer), str(order), product).text


_LATEST = derive(Ref("orders", ("order_ids",)), _latest_other)
PLAN = TaskPlan(
    turns=(
        Turn(
            prompt=PROMPT,
            steps=(
                Step(id="first", need=f"who placed order {ORDER}", tool="get_order", arguments={"order_id": ORDER}),
                Step(
                    id="orders",
                    need="all orders of that customer",
                    tool="list_order_ids",
                    arguments={"customer_id": Ref("first", ("customer_id",))},
                ),
                Step(
                    id="other",
                    need="the items and unit prices of the customer's most recent other order",
                    tool="get_order",
                    arguments={"order_id": _LATEST},
                ),
                Step(
                    id="product",
                    need="the name of the priciest product in that order",
                    tool="get_product",
                    arguments={"product_id": derive(Ref("other", ("items",)), _priciest)},
                ),
            ),
            reads=(Ref("first", ("customer_id",)), _LATEST, Ref("product")),
            answer=_plan_answer,
        ),
    )
)


TASK = Task(
    id="t05-multi-step",
    category="multi-step",
    prompt=PROMPT,
    setup=setup,
    oracle=oracle,
    plan=PLAN,
)
