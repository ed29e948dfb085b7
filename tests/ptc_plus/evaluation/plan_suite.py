"""A small suite of task *plans* for the policy's tests: t06 (gross with tax) and t02 (aggregate orders)
as the engine's first users, plus independent steps, a flaky tool and a child agent.

The world tools have no output schema (as 13 of the real world's 20), except ``order_status``, so a
program must see a result of a tool before it indexes into one.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs

from hookspecs import JSONObject, JSONValue, ToolContext, ToolDefinition, ToolFailure
from hookspecs.services import tool
from ptc_plus.evaluation.task import EndState, Suite, Task, Verdict
from ptc_plus.evaluation.task_plan import Item, Ref, Step, TaskPlan, Turn, derive
from tests.ptc_plus.evaluation.tiny_suite import filler

ORDERS: dict[str, dict[str, Any]] = {
    f"o-{n:02d}": {
        "id": f"o-{n:02d}",
        "customer_id": f"c-{n % 3}",
        "total": float(10 * n),
        "status": "delivered" if n % 2 else "open",
    }
    for n in range(1, 13)
}
CUSTOMERS = {
    "c-0": {"name": "Ada", "country": "NL"},
    "c-1": {"name": "Bo", "country": "DE"},
    "c-2": {"name": "Cy", "country": "FR"},
}
RATES = {"NL": 0.21, "DE": 0.19, "FR": 0.2}


@attrs.define
class World:
    calls: dict[str, int] = attrs.field(factory=dict)
    notes: list[str] = attrs.field(factory=list)

    def count(self, name: str) -> None:
        self.calls[name] = self.calls.get(name, 0) + 1


def world(workspace: Path) -> World:
    return World()


def tools(workspace: Path, state: Any) -> list[ToolDefinition]:
    assert isinstance(state, World)

    def define(name: str, description: str, properties: JSONObject, output: JSONObject | None = None) -> Any:
        schema: JSONObject = {"type": "object", "properties": properties, "required": sorted(properties)}

        def decorate(body: Callable[[JSONObject], JSONValue]) -> ToolDefinition:
            async def handler(arguments: JSONObject, context: ToolContext) -> JSONValue:
                state.count(name)
                return body(arguments)

            return tool(name, description=description, input_schema=schema, output_schema=output)(handler)

        return decorate

    @define(
        "get_order", "Get one order by its id: customer, net total in EUR, status.", {"order_id": {"type": "string"}}
    )
    def get_order(arguments: JSONObject) -> JSONValue:
        found = ORDERS.get(str(arguments["order_id"]))
        if found is None:
            raise ToolFailure("no-order", f"no order {arguments['order_id']}")
        return dict(found)

    @define("get_customer", "Get a customer's record: name and country.", {"customer_id": {"type": "string"}})
    def get_customer(arguments: JSONObject) -> JSONValue:
        return dict(CUSTOMERS[str(arguments["customer_id"])])

    @define("tax_rate", "VAT rates of a country (standard and reduced).", {"country": {"type": "string"}})
    def tax_rate(arguments: JSONObject) -> JSONValue:
        return {"country": arguments["country"], "standard_rate": RATES[str(arguments["country"])], "reduced": 0.09}

    @define(
        "order_status",
        "The delivery status of an order.",
        {"order_id": {"type": "string"}},
        output={"type": "object", "properties": {"status": {"type": "string"}}, "required": ["status"]},
    )
    def order_status(arguments: JSONObject) -> JSONValue:
        return {"status": ORDERS[str(arguments["order_id"])]["status"]}

    @define("warehouse_stock", "Units of a product in stock per warehouse.", {"product_id": {"type": "string"}})
    def warehouse_stock(arguments: JSONObject) -> JSONValue:
        if state.calls["warehouse_stock"] == 1:  # the first call of every run meets an outage
            raise ToolFailure("unavailable", "the inventory service is unavailable, try again")
        return {"warehouses": {"north": 4, "south": 7}}

    @define("add_note", "Add a note to the notebook.", {"text": {"type": "string"}})
    def add_note(arguments: JSONObject) -> JSONValue:
        state.notes.append(str(arguments["text"]))
        return {"id": len(state.notes)}

    return [get_order, get_customer, tax_rate, order_status, warehouse_stock, add_note]


def _nothing(workspace: Path, state: Any) -> None:
    return None


def _equals(expected: str) -> Any:
    def oracle(answer: str, end: EndState) -> Verdict:
        return Verdict(passed=answer == expected, reason="" if answer == expected else f"{answer!r} != {expected!r}")

    return oracle


# -- t06: gross with tax (three dependent lookups into schema-less results) --------------------------------

GROSS_ORDER = "o-04"


def _gross(values: tuple[JSONValue, ...]) -> str:
    net, country, rate = values
    assert isinstance(net, float) and isinstance(rate, float)
    return f"{GROSS_ORDER}: net {net:.2f}, VAT {rate:.0%} ({country}), gross {net * (1 + rate):.2f} EUR"


GROSS_PLAN = TaskPlan(
    turns=(
        Turn(
            prompt=f"What is the gross amount of order {GROSS_ORDER} with VAT at its customer's standard rate?",
            steps=(
                Step(id="order", need="look up an order by id", tool="get_order", arguments={"order_id": GROSS_ORDER}),
                Step(
                    id="customer",
                    need="the customer's country",
                    tool="get_customer",
                    arguments={"customer_id": Ref("order", ("customer_id",))},
                ),
                Step(
                    id="tax",
                    need="VAT rate of a country",
                    tool="tax_rate",
                    arguments={"country": Ref("customer", ("country",))},
                ),
            ),
            reads=(Ref("order", ("total",)), Ref("customer", ("country",)), Ref("tax", ("standard_rate",))),
            answer=_gross,
        ),
    )
)
_order = ORDERS[GROSS_ORDER]
_country = CUSTOMERS[_order["customer_id"]]["country"]
GROSS = Task(
    id="p06-gross-with-tax",
    category="long-tail",
    prompt=GROSS_PLAN.turns[0].prompt,
    setup=_nothing,
    oracle=_equals(
        f"{GROSS_ORDER}: net {_order['total']:.2f}, VAT {RATES[_country]:.0%} ({_country}), "
        f"gross {_order['total'] * (1 + RATES[_country]):.2f} EUR"
    ),
    plan=GROSS_PLAN,
)

# -- t02: aggregate orders (a fan-out over the ids the user gave) ------------------------------------------

IDS = tuple(sorted(ORDERS))


def _aggregate(values: tuple[JSONValue, ...]) -> str:
    (orders,) = values
    assert isinstance(orders, list)
    delivered = [o for o in orders if isinstance(o, dict) and o["status"] == "delivered"]
    return f"{len(delivered)} delivered, revenue {sum(float(o['total']) for o in delivered):.2f} EUR"


AGGREGATE_PLAN = TaskPlan(
    turns=(
        Turn(
            prompt=f"Fetch orders {IDS[0]} through {IDS[-1]}: how many were delivered, and their revenue?",
            steps=(
                Step(
                    id="orders",
                    need="look up an order by id",
                    tool="get_order",
                    arguments={"order_id": Item()},
                    each=IDS,
                ),
            ),
            reads=(Ref("orders"),),
            answer=_aggregate,
        ),
    )
)
_delivered = [o for o in ORDERS.values() if o["status"] == "delivered"]
AGGREGATE = Task(
    id="p02-aggregate-orders",
    category="aggregate",
    prompt=AGGREGATE_PLAN.turns[0].prompt,
    setup=_nothing,
    oracle=_equals(f"{len(_delivered)} delivered, revenue {sum(o['total'] for o in _delivered):.2f} EUR"),
    plan=AGGREGATE_PLAN,
)

# -- derived values: an aggregate worked out from a fan-out, written into a note and the answer -------------


def _delivered_revenue(orders: list[Any]) -> JSONValue:
    delivered = [order for order in orders if order["status"] == "delivered"]
    return {"delivered": len(delivered), "revenue": sum(order["total"] for order in delivered)}


def _summary(orders: list[Any]) -> JSONValue:
    delivered = [order for order in orders if order["status"] == "delivered"]
    return f"{len(delivered)} of {len(orders)} delivered"


def _summed(values: tuple[JSONValue, ...]) -> str:
    (found,) = values
    assert isinstance(found, dict)
    return f"{found['delivered']} delivered, revenue {float(str(found['revenue'])):.2f} EUR"


SUMMARY = derive(Ref("orders"), _summary)
DERIVED_PLAN = TaskPlan(
    turns=(
        Turn(
            prompt=f"Fetch orders {IDS[0]} through {IDS[-1]}, note how many were delivered, and tell me their revenue.",
            steps=(
                Step(
                    id="orders",
                    need="look up an order by id",
                    tool="get_order",
                    arguments={"order_id": Item()},
                    each=IDS,
                ),
                Step(id="note", need="add a note", tool="add_note", arguments={"text": SUMMARY}),
            ),
            reads=(derive(Ref("orders"), _delivered_revenue),),
            answer=_summed,
        ),
    )
)
_derived_note = f"{len(_delivered)} of {len(IDS)} delivered"


def _derived_oracle(answer: str, end: EndState) -> Verdict:
    expected = f"{len(_delivered)} delivered, revenue {sum(o['total'] for o in _delivered):.2f} EUR"
    if answer != expected or end.world.notes != [_derived_note]:
        return Verdict(passed=False, reason=f"{answer!r}, notes {end.world.notes!r}")
    return Verdict(passed=True)


DERIVED = Task(
    id="p02-derived",
    category="aggregate",
    prompt=DERIVED_PLAN.turns[0].prompt,
    setup=_nothing,
    oracle=_derived_oracle,
    plan=DERIVED_PLAN,
)

# -- independent steps, one of them a tool with an output schema ------------------------------------------


def _both(values: tuple[JSONValue, ...]) -> str:
    return f"{values[0]} / {values[1]}"


INDEPENDENT_PLAN = TaskPlan(
    turns=(
        Turn(
            prompt="What is the status of order o-03, and what is customer c-1's country?",
            steps=(
                Step(
                    id="status", need="delivery status of an order", tool="order_status", arguments={"order_id": "o-03"}
                ),
                Step(id="who", need="the customer's country", tool="get_customer", arguments={"customer_id": "c-1"}),
            ),
            reads=(Ref("status", ("status",)), Ref("who", ("country",))),
            answer=_both,
        ),
    )
)
INDEPENDENT = Task(
    id="p10-independent",
    category="one-call",
    prompt=INDEPENDENT_PLAN.turns[0].prompt,
    setup=_nothing,
    oracle=_equals(f"{ORDERS['o-03']['status']} / {CUSTOMERS['c-1']['country']}"),
    plan=INDEPENDENT_PLAN,
)

# -- a flaky tool (one retry) -------------------------------------------------------------------------------


def _stock(values: tuple[JSONValue, ...]) -> str:
    (warehouses,) = values
    assert isinstance(warehouses, dict)
    return f"{sum(int(str(v)) for v in warehouses.values())} units"


def _stock_oracle(answer: str, end: EndState) -> Verdict:
    if answer != "11 units":
        return Verdict(passed=False, reason=f"{answer!r} != '11 units'")
    calls = end.world.calls.get("warehouse_stock", 0)
    return Verdict(passed=calls == 2, reason="" if calls == 2 else f"calls: {end.world.calls}")


FLAKY_PLAN = TaskPlan(
    turns=(
        Turn(
            prompt="How many units of p-1 are in stock?",
            steps=(
                Step(
                    id="stock",
                    need="units of a product in stock",
                    tool="warehouse_stock",
                    arguments={"product_id": "p-1"},
                    retries=1,
                ),
            ),
            reads=(Ref("stock", ("warehouses",)),),
            answer=_stock,
        ),
    )
)
FLAKY = Task(
    id="p08-flaky",
    category="recovery",
    prompt=FLAKY_PLAN.turns[0].prompt,
    setup=_nothing,
    oracle=_stock_oracle,
    plan=FLAKY_PLAN,
)

# -- a child agent --------------------------------------------------------------------------------------------

CHILD_PROMPT = "Sum the net totals of orders o-01 and o-03."


def _sum(values: tuple[JSONValue, ...]) -> str:
    (orders,) = values
    assert isinstance(orders, list)
    return f"{sum(float(o['total']) for o in orders if isinstance(o, dict)):.2f}"


CHILD_PLAN = TaskPlan(
    turns=(
        Turn(
            prompt=CHILD_PROMPT,
            steps=(
                Step(
                    id="pair",
                    need="look up an order by id",
                    tool="get_order",
                    arguments={"order_id": Item()},
                    each=("o-01", "o-03"),
                ),
            ),
            reads=(Ref("pair"),),
            answer=_sum,
        ),
    )
)


def _delegated(values: tuple[JSONValue, ...]) -> str:
    return str(values[0])


PARENT_PLAN = TaskPlan(
    turns=(
        Turn(
            prompt="Have a helper sum orders o-01 and o-03, note the sum, and tell me.",
            steps=(
                Step(
                    id="helper",
                    need="start a child agent",
                    tool="agent",
                    arguments={"prompt": CHILD_PROMPT},
                    child=CHILD_PLAN,
                ),
                Step(
                    id="note",
                    need="add a note",
                    tool="add_note",
                    arguments={"text": Ref("helper", ("answer",))},
                ),
            ),
            reads=(Ref("helper", ("answer",)),),
            answer=_delegated,
        ),
    )
)
_child_sum = f"{ORDERS['o-01']['total'] + ORDERS['o-03']['total']:.2f}"


def _child_oracle(answer: str, end: EndState) -> Verdict:
    if answer != _child_sum or end.world.notes != [_child_sum]:
        return Verdict(passed=False, reason=f"{answer!r}, notes {end.world.notes!r}")
    return Verdict(passed=True)


CHILD = Task(
    id="p07-child",
    category="child",
    prompt=PARENT_PLAN.turns[0].prompt,
    setup=_nothing,
    oracle=_child_oracle,
    plan=PARENT_PLAN,
)

SUITE = Suite(
    version="plan-test-1",
    tasks=(GROSS, AGGREGATE, DERIVED, INDEPENDENT, FLAKY, CHILD),
    warmup=(GROSS, INDEPENDENT),
    world=world,
    tools=tools,
    filler=filler,
)
OWN_TOOLS = 6 + 2 + 1
"""World tools, the time server's two, ``agent``."""
