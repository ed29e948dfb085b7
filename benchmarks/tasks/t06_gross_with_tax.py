"""t06 — long tail: an order's gross amount needs ``tax_rate``, a tool a plan keeps on demand."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hookspecs.types import JSONValue
from ptc_plus.evaluation.task import Answer, EndState, Task, Verdict
from ptc_plus.evaluation.task_plan import Ref, Step, TaskPlan, Turn

from .oracles import amounts, has_number, only, stated_after, verdict

ORDER = "o-0042"
PROMPT = (
    f"Order totals are net. What is the gross amount of order {ORDER} including VAT at the standard rate "
    "of the customer's country?"
)


def setup(workspace: Path, world: Any) -> None:
    """Nothing to write: everything is in the services."""


def _answer(net: float, country: str, rate: float) -> Answer:
    gross = round(net * (1 + rate), 2)
    return Answer(text=f"Order {ORDER}: net {net:.2f} EUR, VAT {rate:.0%} ({country}), gross {gross:.2f} EUR.")


def oracle(answer: str, end: EndState) -> Verdict:
    from .world import TAX_RATES

    order = end.world.data.orders[ORDER]
    country = end.world.data.customers[order["customer_id"]]["country"]
    net = order["total"]
    gross = round(net * (1 + TAX_RATES[country]), 2)
    as_gross, as_net = stated_after(answer, "gross"), stated_after(answer, "net")
    return verdict(
        answer,
        [
            (has_number(answer, gross, 0.011), f"the gross amount {gross:.2f} is missing"),
            (bool(as_gross) and not only(as_gross, [gross], 0.011), f"the amount called gross is not {gross:.2f}"),
            (not only(as_net, [net], 0.011), f"the amount called net is not {net:.2f}"),
            (not only(amounts(answer, "EUR"), [net, gross], 0.011), "an amount that is neither net nor gross"),
        ],
    )


def _plan_answer(values: tuple[JSONValue, ...]) -> str:
    net, country, rate = values
    return _answer(float(str(net)), str(country), float(str(rate))).text


PLAN = TaskPlan(
    turns=(
        Turn(
            prompt=PROMPT,
            steps=(
                Step(
                    id="order",
                    need=f"the net total of order {ORDER} and who placed it",
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
                    id="vat",
                    need="the standard VAT rate of that country",
                    tool="tax_rate",
                    arguments={"country": Ref("customer", ("country",))},
                ),
            ),
            reads=(Ref("order", ("total",)), Ref("customer", ("country",)), Ref("vat", ("standard_rate",))),
            answer=_plan_answer,
        ),
    )
)


TASK = Task(
    id="t06-gross-with-tax",
    category="long-tail",
    prompt=PROMPT,
    setup=setup,
    oracle=oracle,
    plan=PLAN,
)
