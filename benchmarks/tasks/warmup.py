"""The warm-up set: tasks that build the mature statistics, never measured.

They use the same everyday tools as the measured tasks (orders, products,
files, notes, stock) but ask different questions, so the mature plan is
learned from use, not from the answers it is scored on.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs

from hookspecs.types import JSONValue
from ptc_plus.evaluation.task import Answer, EndState, Task, Verdict
from ptc_plus.evaluation.task_plan import Item, Ref, Step, TaskPlan, Turn, derive

from .oracles import amounts, has_number, ids, notes_in, only, verdict


def _nothing(workspace: Path, world: Any) -> None:
    """Nothing to write: the data lives in the services."""


# w01 — orders of one customer, and how many were delivered.
W01_CUSTOMER = "c-011"


def _w01_answer(total: int, delivered: int, name: str) -> Answer:
    return Answer(text=f"{name} ({W01_CUSTOMER}) placed {total} orders; {delivered} were delivered.")


def _w01_oracle(answer: str, end: EndState) -> Verdict:
    mine = [o for o in end.world.data.orders.values() if o["customer_id"] == W01_CUSTOMER]
    delivered = sum(o["status"] == "delivered" for o in mine)
    return verdict(
        answer,
        [
            (has_number(answer, len(mine)), f"the order count {len(mine)} is missing"),
            (has_number(answer, delivered), f"the delivered count {delivered} is missing"),
            (not only(amounts(answer, "orders"), [len(mine)]), f"a count of orders other than {len(mine)}"),
            (not only(amounts(answer, "were delivered"), [delivered]), f"a delivered count other than {delivered}"),
        ],
    )


# w02 — compare two products' prices.
W02_PRODUCTS = ("p-005", "p-006")


def _w02_answer(products: list[Any]) -> Answer:
    cheaper = min(products, key=lambda p: p["price"])
    listed = "; ".join(f"{p['id']} costs {p['price']:.2f} EUR" for p in products)
    return Answer(text=f"{listed}. The cheaper one is {cheaper['id']}.")


def _w02_oracle(answer: str, end: EndState) -> Verdict:
    products = [end.world.data.products[pid] for pid in W02_PRODUCTS]
    cheaper = min(products, key=lambda p: p["price"])["id"]
    verdict_words = answer.rpartition("cheaper")[2]
    return verdict(
        answer,
        [
            *[(has_number(answer, p["price"]), f"the price of {p['id']} is missing") for p in products],
            (ids(verdict_words, "p") == {cheaper}, f"{cheaper} is not named the cheaper one"),
        ],
    )


# w03 — find a marker across files, then read the file that has it.
def _w03_setup(workspace: Path, world: Any) -> None:
    for number in range(1, 16):
        body = [f"line {k} of module {number}" for k in range(20)]
        if number == 9:
            body.insert(7, "FIXME: the retry budget is hard-coded")
        path = workspace / "lib" / f"module_{number:02d}.txt"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(body) + "\n", encoding="utf-8")


def _w03_answer(path: str, total_lines: int) -> Answer:
    return Answer(text=f"The FIXME is in {path}, a file of {total_lines} lines.")


def _w03_oracle(answer: str, end: EndState) -> Verdict:
    hits = [p for p in sorted((end.workspace / "lib").glob("*.txt")) if "FIXME" in p.read_text(encoding="utf-8")]
    lines = len(hits[0].read_text(encoding="utf-8").splitlines())
    path = str(hits[0].relative_to(end.workspace))
    return verdict(
        answer, [(path in answer, f"{path} is missing"), (has_number(answer, lines), f"{lines} lines is missing")]
    )


# w04 — the average price of a category.
def _w04_answer(count: int, average: float) -> Answer:
    return Answer(text=f"The {count} mice cost {average:.2f} EUR on average.")


def _w04_oracle(answer: str, end: EndState) -> Verdict:
    prices = [p["price"] for p in end.world.data.products.values() if p["category"] == "mice"]
    average = round(sum(prices) / len(prices), 2)
    wrong = only(amounts(answer, "EUR"), [average], 0.011)
    return verdict(
        answer,
        [(has_number(answer, average, 0.011), f"the average {average:.2f} is missing"), (not wrong, f"other: {wrong}")],
    )


# w05 — note an order's status (changes state).
W05_ORDER = "o-0010"


def _w05_oracle(answer: str, end: EndState) -> Verdict:
    order = end.world.data.orders[W05_ORDER]
    notes = [n for n in notes_in(end.workspace) if W05_ORDER in n[0] and order["status"] in n[1] and "orders" in n[2]]
    return verdict(
        answer,
        [
            (len(notes) == 1, f"expected one 'orders' note saying {order['status']}"),
            (order["status"] in answer, f"the status {order['status']} is missing"),
            (has_number(answer, order["total"]), f"the total {order['total']} is missing"),
        ],
    )


# w06 — stock of one product (the inventory service fails once per run here too).
W06_PRODUCT = "p-020"


def _w06_oracle(answer: str, end: EndState) -> Verdict:
    units = end.world.data.stock[W06_PRODUCT]["berlin"]
    return verdict(
        answer,
        [
            (has_number(answer, units), f"{units} units is missing"),
            (not only(amounts(answer, "units"), [units]), f"a count other than {units} units"),
            (end.world.calls["warehouse_stock"] >= 2, "the run never met (and recovered from) the outage"),
        ],
    )


_TASKS = (
    Task(
        id="w01-customer-orders",
        category="multi-step",
        prompt=f"How many orders has customer {W01_CUSTOMER} placed, and how many of them were delivered?",
        setup=_nothing,
        oracle=_w01_oracle,
    ),
    Task(
        id="w02-compare-prices",
        category="ordinary",
        prompt=f"What do products {W02_PRODUCTS[0]} and {W02_PRODUCTS[1]} cost, and which is cheaper?",
        setup=_nothing,
        oracle=_w02_oracle,
    ),
    Task(
        id="w03-find-fixme",
        category="find-count",
        prompt="Which file mentions FIXME, and how many lines does it have?",
        setup=_w03_setup,
        oracle=_w03_oracle,
    ),
    Task(
        id="w04-average-price",
        category="aggregate",
        prompt="What is the average price of the mice in our catalog?",
        setup=_nothing,
        oracle=_w04_oracle,
    ),
    Task(
        id="w05-note-order",
        category="state",
        prompt=f"Add a note (tag 'orders') recording the status and total of order {W05_ORDER}.",
        setup=_nothing,
        oracle=_w05_oracle,
    ),
    Task(
        id="w06-berlin-stock",
        category="recovery",
        prompt=f"How many units of {W06_PRODUCT} are in the Berlin warehouse?",
        setup=_nothing,
        oracle=_w06_oracle,
    ),
)


# ---------------------------------------------------------------- the warm-up tasks as plans


def _w01_plan_answer(values: tuple[JSONValue, ...]) -> str:
    name, every, done = values
    assert isinstance(every, list) and isinstance(done, list)
    return _w01_answer(len(every), len(done), str(name)).text


def _w02_plan_answer(values: tuple[JSONValue, ...]) -> str:
    return _w02_answer(list(values)).text


def _w03_plan_answer(values: tuple[JSONValue, ...]) -> str:
    path, lines = values
    return _w03_answer(str(path), int(str(lines))).text


def _w04_count_average(products: list[Any]) -> JSONValue:
    prices = [product["price"] for product in products]
    return {"count": len(prices), "average": round(sum(prices) / len(prices), 2)}


def _w04_plan_answer(values: tuple[JSONValue, ...]) -> str:
    found: Any = values[0]
    return _w04_answer(found["count"], found["average"]).text


def _w05_body(order: Any) -> JSONValue:
    return f"{order['id']} is {order['status']} (total {order['total']:.2f} EUR)."


def _w05_plan_answer(values: tuple[JSONValue, ...]) -> str:
    return f"Noted: {values[0]}"


def _w06_plan_answer(values: tuple[JSONValue, ...]) -> str:
    return f"Berlin holds {values[0]} units of {W06_PRODUCT}."


def _one_turn(task: Task, steps: tuple[Step, ...], reads: tuple[Ref, ...], answer: Any) -> TaskPlan:
    return TaskPlan(turns=(Turn(prompt=task.prompt, steps=steps, reads=reads, answer=answer),))


_W05_BODY = derive(Ref("order"), _w05_body)
PLANS: dict[str, TaskPlan] = {
    "w01-customer-orders": _one_turn(
        _TASKS[0],
        (
            Step(
                id="customer",
                need=f"the name of customer {W01_CUSTOMER}",
                tool="get_customer",
                arguments={"customer_id": W01_CUSTOMER},
            ),
            Step(
                id="every",
                need=f"all orders customer {W01_CUSTOMER} placed",
                tool="list_order_ids",
                arguments={"customer_id": W01_CUSTOMER},
            ),
            Step(
                id="delivered",
                need=f"the delivered orders of customer {W01_CUSTOMER}",
                tool="list_order_ids",
                arguments={"customer_id": W01_CUSTOMER, "status": "delivered"},
            ),
        ),
        (Ref("customer", ("name",)), Ref("every", ("order_ids",)), Ref("delivered", ("order_ids",))),
        _w01_plan_answer,
    ),
    "w02-compare-prices": _one_turn(
        _TASKS[1],
        tuple(
            Step(id=pid, need=f"the price of product {pid}", tool="get_product", arguments={"product_id": pid})
            for pid in W02_PRODUCTS
        ),
        tuple(Ref(pid) for pid in W02_PRODUCTS),
        _w02_plan_answer,
    ),
    "w03-find-fixme": _one_turn(
        _TASKS[2],
        (
            Step(id="found", need="which file mentions FIXME", tool="search_files", arguments={"query": "FIXME"}),
            Step(
                id="content",
                need="how many lines that file has",
                tool="read_file",
                arguments={"path": Ref("found", ("matches", 0, "path"))},
            ),
        ),
        (Ref("found", ("matches", 0, "path")), Ref("content", ("total_lines",))),
        _w03_plan_answer,
    ),
    "w04-average-price": _one_turn(
        _TASKS[3],
        (
            Step(
                id="mice",
                need="all mice in our product catalog",
                tool="search_products",
                arguments={"category": "mice"},
            ),
            Step(
                id="details",
                need="a product's price",
                tool="get_product",
                arguments={"product_id": Item(("id",))},
                each=Ref("mice", ("products",)),
            ),
        ),
        (derive(Ref("details"), _w04_count_average),),
        _w04_plan_answer,
    ),
    "w05-note-order": _one_turn(
        _TASKS[4],
        (
            Step(
                id="order",
                need=f"the status and total of order {W05_ORDER}",
                tool="get_order",
                arguments={"order_id": W05_ORDER},
            ),
            Step(
                id="note",
                need="add a note with a title, a body and a tag",
                tool="notes_add",
                arguments={"title": f"Order {W05_ORDER} status", "body": _W05_BODY, "tags": ["orders"]},
            ),
        ),
        (_W05_BODY,),
        _w05_plan_answer,
    ),
    "w06-berlin-stock": _one_turn(
        _TASKS[5],
        (
            Step(
                id="stock",
                need=f"units of {W06_PRODUCT} in stock in each warehouse",
                tool="warehouse_stock",
                arguments={"product_id": W06_PRODUCT},
                retries=1,  # the inventory service's first answer of a run is a 503 "try again"
            ),
        ),
        (Ref("stock", ("warehouses", "berlin")),),
        _w06_plan_answer,
    ),
}
"""The warm-up tasks as plans, by task id."""

TASKS = tuple(attrs.evolve(task, plan=PLANS[task.id]) for task in _TASKS)
"""The warm-up set, each task with its plan."""
