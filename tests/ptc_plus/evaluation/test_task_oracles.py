"""Every oracle of the suite rejects a wrong answer a model could plausibly give (issue 27, item 3).

The right answer is the one the task's plan writes, run directly against the
real tools (:mod:`plan_support`); it must pass. Each task then gets the wrong
answers listed in the issue, or one of the same kind: listing every candidate
instead of choosing (t04, t15), gross and net swapped (t06), the right words
with no child agent behind them (t07), a hedged value (t09), and for the
others a confusable value (all months, all orders, the pounds as kilograms,
a second file or time named beside the right one). Each is built from the
world's data, so it is wrong for the fixture as it is, and each must fail
with a reason.
"""

from __future__ import annotations

import asyncio
import re
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ptc_plus.evaluation.task import EndState, Task
from tests.ptc_plus.evaluation.plan_support import ALL_TASKS, CHILD_PLANS, SUITE, Tools, execute, plan_check

Wrong = Callable[[str, EndState, Path], tuple[str, EndState]]
"""``(right answer, end state, tmp dir) -> (wrong answer, the end state it is judged with)``."""


def _module(task_id: str) -> Any:
    return next(m for m in list(sys.modules.values()) if getattr(m, "TASK", None) is _task(task_id))


def _task(task_id: str) -> Task:
    return next(t for t in ALL_TASKS if t.id == task_id)


def _t01(right: str, end: EndState, tmp: Path) -> tuple[str, EndState]:
    per_file = Counter(m for m in re.findall(r"src/\S+\.py", right))
    total = int(re.findall(r"There are (\d+)", right)[0])
    top = next(iter(per_file))
    second = "src/api/models.py" if top != "src/api/models.py" else "src/api/views.py"
    return f"There are {total} TODO comments; the files with the most are {top} and {second}.", end


def _t02(right: str, end: EndState, tmp: Path) -> tuple[str, EndState]:
    orders = [end.world.data.orders[f"o-{n:04d}"] for n in range(1, 201)]
    delivered = sum(o["status"] == "delivered" for o in orders)
    every = round(sum(o["total"] for o in orders), 2)  # the revenue of all 200, delivered or not
    return f"{delivered} of the 200 orders were delivered; their revenue is {every:.2f} EUR.", end


def _t03(right: str, end: EndState, tmp: Path) -> tuple[str, EndState]:
    vips = _module("t03-cross-reference").VIPS
    return "VIP customers with a returned order: " + ", ".join(vips) + ".", end


def _t04(right: str, end: EndState, tmp: Path) -> tuple[str, EndState]:
    headphones = [p for p in end.world.data.products.values() if p["category"] == "headphones"]
    listed = "; ".join(f"{p['id']} {p['name']}: rated {p['rating']}, {p['price']:.2f} EUR" for p in headphones)
    return f"Our headphones: {listed}.", end  # all 10, the best among them, none chosen


def _t05(right: str, end: EndState, tmp: Path) -> tuple[str, EndState]:
    latest = re.findall(r"o-\d{4}", right)[-1]
    items = end.world.data.orders[latest]["items"]
    assert len(items) > 1, "the fixture's order has one item: listing them would be choosing"
    listed = ", ".join(f"{i['product_id']} ({end.world.data.products[i['product_id']]['name']})" for i in items)
    return f"The most recent other order is {latest}; its products are {listed}.", end


def _t06(right: str, end: EndState, tmp: Path) -> tuple[str, EndState]:
    net, gross = (float(v) for v in re.findall(r"(?:net|gross) (\d+\.\d\d)", right))
    return right.replace(f"{net:.2f}", "NET").replace(f"{gross:.2f}", f"{net:.2f}").replace("NET", f"{gross:.2f}"), end


def _t07(right: str, end: EndState, tmp: Path) -> tuple[str, EndState]:
    # The root does the child's search itself, then says the same words: no child agent ran.
    workspace = tmp / "no-child"
    workspace.mkdir()
    world = SUITE.world(workspace)
    tools = Tools(workspace, SUITE.tools(workspace, world))
    asyncio.run(plan_check.PlanExecutor(tools).run(CHILD_PLANS["t07-child-agent"]))
    assert tools.called and world.child_calls.total() == 0
    return right, EndState(workspace=workspace, world=world)


def _t08(right: str, end: EndState, tmp: Path) -> tuple[str, EndState]:
    berlin = end.world.data.stock["p-012"]["berlin"]
    return f"{berlin} units of p-012 are in stock.", end  # one warehouse taken for all


def _t09(right: str, end: EndState, tmp: Path) -> tuple[str, EndState]:
    return right.replace(" is ", " is about "), end


def _t10(right: str, end: EndState, tmp: Path) -> tuple[str, EndState]:
    clock = re.findall(r"\d\d:\d\d", right)[-1]
    hour = (int(clock[:2]) + 1) % 24
    return f"When it is 09:30 in Tokyo it is {clock} or {hour:02d}:{clock[3:]} in Kolkata.", end


def _t11(right: str, end: EndState, tmp: Path) -> tuple[str, EndState]:
    module = _module("t11-write-report")
    mine = [oid for oid, o in end.world.data.orders.items() if o["customer_id"] == module.CUSTOMER]
    (end.workspace / module.REPORT).write_text("\n".join(mine) + "\n", encoding="utf-8")  # every order, not shipped
    return right, end


def _t12(right: str, end: EndState, tmp: Path) -> tuple[str, EndState]:
    # The closing line "No ACTION items were carried over" counted as an item.
    count = int(re.findall(r"\d+", right)[0])
    return right.replace(f"{count} notes", f"{count + 1} notes"), end


def _t13(right: str, end: EndState, tmp: Path) -> tuple[str, EndState]:
    shipping_price = sys.modules[_module("t13-shipping-quote").__package__ + ".world"].shipping_price
    price = float(re.findall(r"(\d+\.\d\d) EUR", right)[-1])
    other = shipping_price("JP", 5.0) if price != shipping_price("JP", 5.0) else 1.0
    return f"{right[:-1]}, or {other:.2f} EUR by the other service.", end


def _t14(right: str, end: EndState, tmp: Path) -> tuple[str, EndState]:
    folder = end.workspace / "data" / "invoices"
    every = sum(
        float(line.split(",")[2])
        for path in folder.glob("*.csv")
        for line in path.read_text(encoding="utf-8").splitlines()[1:]
    )
    return f"Over 24 CSV files, invoices total {every:.2f} EUR.", end  # every month, not October


def _t15(right: str, end: EndState, tmp: Path) -> tuple[str, EndState]:
    dutch = [c for c in end.world.data.customers.values() if c["country"] == "NL"]
    gold = sum(c["tier"] == "gold" for c in dutch)
    names = ", ".join(f"{c['name']} ({c['id']})" for c in dutch)
    return f"{gold} customers in the Netherlands are gold tier: {names}.", end  # every Dutch customer named


def _t16(right: str, end: EndState, tmp: Path) -> tuple[str, EndState]:
    pounds = re.findall(r"(\d+\.\d) lb", right)[0]
    return f"The parcels weigh {pounds} kg in total.", end


def _w01(right: str, end: EndState, tmp: Path) -> tuple[str, EndState]:
    return re.sub(r"(\d+) were delivered", lambda m: f"{int(m.group(1)) + 1} were delivered", right), end


def _w02(right: str, end: EndState, tmp: Path) -> tuple[str, EndState]:
    return re.sub(r"The cheaper one is p-\d+\.", "Either could be the cheaper one.", right), end


def _w03(right: str, end: EndState, tmp: Path) -> tuple[str, EndState]:
    return right.replace("module_09", "module_10"), end


def _w04(right: str, end: EndState, tmp: Path) -> tuple[str, EndState]:
    return right.replace("on average", "on average, roughly"), end


def _w05(right: str, end: EndState, tmp: Path) -> tuple[str, EndState]:
    fresh = tmp / "never-noted"
    fresh.mkdir()
    return right, EndState(workspace=fresh, world=SUITE.world(fresh))  # the words, but no note written


def _w06(right: str, end: EndState, tmp: Path) -> tuple[str, EndState]:
    total = sum(end.world.data.stock["p-020"].values())
    return f"Berlin holds {total} units of p-020.", end  # every warehouse's stock taken for Berlin's


WRONG: dict[str, Wrong] = {
    "t01-find-todos": _t01,
    "t02-aggregate-orders": _t02,
    "t03-cross-reference": _t03,
    "t04-best-headphones": _t04,
    "t05-multi-step": _t05,
    "t06-gross-with-tax": _t06,
    "t07-child-agent": _t07,
    "t08-flaky-stock": _t08,
    "t09-one-call": _t09,
    "t10-mcp-time": _t10,
    "t11-write-report": _t11,
    "t12-meeting-notes": _t12,
    "t13-shipping-quote": _t13,
    "t14-invoice-files": _t14,
    "t15-gold-customers": _t15,
    "t16-parcel-weights": _t16,
    "w01-customer-orders": _w01,
    "w02-compare-prices": _w02,
    "w03-find-fixme": _w03,
    "w04-average-price": _w04,
    "w05-note-order": _w05,
    "w06-berlin-stock": _w06,
}


def test_every_task_has_a_wrong_answer() -> None:
    assert set(WRONG) == {task.id for task in ALL_TASKS}


@pytest.mark.parametrize("task", ALL_TASKS, ids=lambda t: t.id)
def test_the_oracle_passes_the_right_answer_and_rejects_the_wrong_one(task: Task, tmp_path: Path) -> None:
    right, end, _, _ = execute(task, tmp_path)
    passed = task.oracle(right, end)
    assert passed.passed, f"{right!r}: {passed.reason}"
    wrong, wrong_end = WRONG[task.id](right, end, tmp_path)
    failed = task.oracle(wrong, wrong_end)
    assert not failed.passed and failed.reason, wrong


@pytest.mark.parametrize(
    "hedge",
    [
        "about {v}",
        "approximately {v}",
        "around {v}",
        "roughly {v}",
        "~{v}",
        "between {v} and 99999",
        "either {v} or 1",
        "I think {v}",
        "{v}, I believe",
        "what might be {v}",
        "probably {v}",
        "maybe {v}",
    ],
)
def test_a_hedged_value_fails_even_when_it_is_the_right_one(hedge: str, tmp_path: Path) -> None:
    task = _task("t09-one-call")
    right, end, _, _ = execute(task, tmp_path)
    km = re.findall(r"(\d+\.\d\d) km", right)[0]
    hedged = right.replace(f"{km} km", hedge.format(v=km) + " km")
    assert km in hedged and hedged != right
    verdict = task.oracle(hedged, end)
    assert not verdict.passed and "hedges" in verdict.reason
