"""t05 — multi-step lookups: order → customer → their latest other order → its priciest product."""

from __future__ import annotations

from collections.abc import Generator
from pathlib import Path
from typing import Any

from hookspecs.types import JSONValue
from ptc_plus.evaluation.task import Action, Answer, Call, EndState, Observation, Program, Task, Verdict
from ptc_plus.evaluation.task_plan import Ref, Step, TaskPlan, Turn

from .derived import derive
from .oracles import ids, judge, verdict
from .world import queries

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


def native() -> Generator[Action, Observation, None]:
    first: Any = (yield Call(tool="get_order", arguments={"order_id": ORDER})).value
    customer = first["customer_id"]
    ids: Any = (yield Call(tool="list_order_ids", arguments={"customer_id": customer})).value
    latest = [oid for oid in ids["order_ids"] if oid != ORDER][-1]
    other: Any = (yield Call(tool="get_order", arguments={"order_id": latest})).value
    priciest = max(other["items"], key=lambda item: item["unit_price"])
    product = (yield Call(tool="get_product", arguments={"product_id": priciest["product_id"]})).value
    yield _answer(customer, latest, product)


CODE = f"""first = await tools.get_order(order_id="{ORDER}")
ids = await tools.list_order_ids(customer_id=first["customer_id"])
latest = [oid for oid in ids["order_ids"] if oid != "{ORDER}"][-1]
other = await tools.get_order(order_id=latest)
priciest = max(other["items"], key=lambda item: item["unit_price"])
product = await tools.get_product(product_id=priciest["product_id"])
return {{"customer": first["customer_id"], "order": latest, "product": product}}"""


def code() -> Generator[Action, Observation, None]:
    found: Any = (
        yield Program(
            code=CODE,
            description="Priciest product of the customer's latest other order",
            uses=("get_order", "list_order_ids", "get_product"),
        )
    ).value
    yield _answer(found["customer"], found["order"], found["product"])


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
    native=native,
    code=code,
    oracle=oracle,
    queries=queries("get_order", "list_order_ids", "get_product"),
)
