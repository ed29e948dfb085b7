"""The task plans of the suite (``PLANS``), executed directly: no model, no style, the world's real tools.

Each plan's steps run against the handlers ``SUITE.tools`` gives (arguments
checked against the tools' input schemas, as the host does), in the order the
plan's dependencies allow; the child task's ``agent`` step runs the child
plan as a child session; ``convert_time`` is the real time server's code,
called in-process. The answer the plan writes from what those tools returned
must pass the task's oracle: the plans are right independent of any policy.
"""

from __future__ import annotations

import ast
import asyncio
import re
from pathlib import Path
from typing import Any

import pytest

from hookspecs.types import AgentRef
from ptc_plus.evaluation.task import Task
from ptc_plus.evaluation.task_plan import Derived, Ref, TaskPlan, dependencies, derived_values
from tests.ptc_plus.evaluation.plan_support import (
    ALL_TASKS,
    CHILD_PLANS,
    PLANS,
    SUITE,
    Tools,
    execute,
    plan_check,
)


def _steps(plan: TaskPlan) -> list[Any]:
    return [step for turn in plan.turns for step in turn.steps]


def test_every_task_and_warm_up_task_has_a_plan_of_its_own_prompt() -> None:
    assert set(PLANS) == {task.id for task in ALL_TASKS}
    for task in ALL_TASKS:
        plan = PLANS[task.id]
        assert plan.turns[0].prompt == task.prompt, task.id
        ids = [step.id for step in _steps(plan)]
        assert len(ids) == len(set(ids)), task.id
    assert set(CHILD_PLANS) == {task.id for task in ALL_TASKS if task.category == "child"}


@pytest.mark.parametrize("task", ALL_TASKS, ids=lambda t: t.id)
def test_a_plan_uses_the_tools_of_its_task_and_words_its_needs_as_a_user(task: Task) -> None:
    plans = [PLANS[task.id], *([CHILD_PLANS[task.id]] if task.id in CHILD_PLANS else [])]
    steps = [step for plan in plans for step in _steps(plan)]
    for step in steps:
        identifiers = [word for word in step.need.split() if "_" in word and "/" not in word]
        assert step.need and not identifiers, f"{step.id}: {step.need!r} names identifiers, not what a user needs"
        spelled = re.escape(step.tool.replace("_", " "))
        assert not re.search(rf"(?<![\w-]){spelled}(?![\w-])", step.need), f"{step.id}: the need spells its tool"


@pytest.mark.parametrize("task", ALL_TASKS, ids=lambda t: t.id)
def test_every_plan_passes_its_oracle_run_directly_against_the_real_tools(task: Task, tmp_path: Path) -> None:
    answer, end, tools, _ = execute(task, tmp_path)
    verdict = task.oracle(answer, end)
    assert verdict.passed, f"{answer!r}: {verdict.reason}"
    assert tools.called, "the plan called no tool"


def test_the_flaky_step_is_retried_once_and_the_plan_recovers(tmp_path: Path) -> None:
    task = next(t for t in SUITE.tasks if t.category == "recovery")
    _, end, tools, _ = execute(task, tmp_path)
    assert [name for name, _ in tools.called] == ["warehouse_stock", "warehouse_stock"]
    assert end.world.calls["warehouse_stock"] == 2


def test_without_its_retry_the_flaky_plan_fails(tmp_path: Path) -> None:
    import attrs

    task = next(t for t in SUITE.tasks if t.category == "recovery")
    plan = PLANS[task.id]
    turn = plan.turns[0]
    once = attrs.evolve(plan, turns=(attrs.evolve(turn, steps=(attrs.evolve(turn.steps[0], retries=0),)),))
    workspace = tmp_path / "w"
    workspace.mkdir()
    world = SUITE.world(workspace)
    executor = plan_check.PlanExecutor(Tools(workspace, SUITE.tools(workspace, world)))
    with pytest.raises(plan_check.PlanFailed, match="warehouse_stock failed 1 time"):
        asyncio.run(executor.run(once))


def test_the_child_task_runs_its_search_in_a_child_session(tmp_path: Path) -> None:
    task = next(t for t in SUITE.tasks if t.category == "child")
    _, end, tools, executor = execute(task, tmp_path)
    assert executor.children == 1
    by_child = [name for name, caller in tools.called if caller.session_id != caller.family_id]
    assert "search_products" in by_child and end.world.child_calls["search_products"] == 1
    assert [name for name, caller in tools.called if caller.session_id == caller.family_id] == ["get_product"]


def test_the_aggregate_plan_is_one_fan_out_over_the_200_ids_the_user_named(tmp_path: Path) -> None:
    task = next(t for t in SUITE.tasks if t.category == "aggregate")
    (step,) = _steps(PLANS[task.id])
    assert step.each == tuple(f"o-{n:04d}" for n in range(1, 201)) and dependencies(step) == frozenset()
    _, _, tools, _ = execute(task, tmp_path)
    assert [name for name, _ in tools.called] == ["get_order"] * 200


def test_dependencies_order_the_calls(tmp_path: Path) -> None:
    # t13: the customer and the products both wait for the order and for nothing else; the quote waits for all.
    plan = PLANS["t13-shipping-quote"]
    deps = {step.id: dependencies(step) for step in _steps(plan)}
    assert deps == {
        "order": frozenset(),
        "customer": {"order"},
        "products": {"order"},
        "quote": {"customer", "order", "products"},
    }
    _, _, tools, _ = execute(next(t for t in SUITE.tasks if t.id == "t13-shipping-quote"), tmp_path)
    names = [name for name, _ in tools.called]
    assert names[0] == "get_order" and names[-1] == "shipping_quote"


def _derived_values(plan: TaskPlan) -> list[Any]:
    found: list[Any] = []
    for turn in plan.turns:
        for step in turn.steps:
            found += derived_values([dict(step.arguments), step.each])
        found += [r for r in turn.reads if isinstance(r, Derived)]
    return found


def _plans(task: Task) -> list[TaskPlan]:
    return [PLANS[task.id], *([CHILD_PLANS[task.id]] if task.id in CHILD_PLANS else [])]


DERIVING = [task for task in ALL_TASKS if any(_derived_values(plan) for plan in _plans(task))]


def test_most_plans_derive_values_between_calls() -> None:
    assert {t.id for t in DERIVING} >= {"t02-aggregate-orders", "t03-cross-reference", "t05-multi-step"}


@pytest.mark.parametrize("task", DERIVING, ids=lambda t: t.id)
def test_a_derived_values_program_text_computes_what_its_function_does(task: Task, tmp_path: Path) -> None:
    """The ``code`` a program would carry is self-contained and equal in effect to ``fn`` on the real results."""
    plans = _plans(task)
    values = [value for plan in plans for value in _derived_values(plan)]
    results: dict[str, Any] = {}

    class Recording(plan_check.PlanExecutor):  # type: ignore[misc, name-defined]
        async def _step(self, step: Any, known: Any, caller: AgentRef) -> Any:
            value = await super()._step(step, known, caller)
            results[step.id] = value
            return value

    workspace = tmp_path / "workspace"
    workspace.mkdir()
    world = SUITE.world(workspace)
    task.setup(workspace, world)
    asyncio.run(
        Recording(Tools(workspace, SUITE.tools(workspace, world)), child=CHILD_PLANS.get(task.id)).run(plans[0])
    )
    for value in values:
        namespace: dict[str, Any] = {}
        exec(value.code, namespace)  # the suite's own source, as a program would carry it
        sources = [plan_check.resolve(Ref(s.step, s.path), results) for s in value.sources]
        assert namespace[value.name](*sources) == value.fn(*sources), value.name
        tree = ast.parse(value.code)
        assert not [n for n in ast.walk(tree) if isinstance(n, ast.AnnAssign) or getattr(n, "annotation", None)]


def test_no_prompt_or_plan_names_an_absolute_path() -> None:
    # Counts must not depend on where the run lives: tasks speak of workspace-relative paths only.
    for task in ALL_TASKS:
        texts = [task.prompt, *(repr(dict(s.arguments)) + s.need for s in _steps(PLANS[task.id]))]
        assert not [t for t in texts if re.search(r"(?<![\w.])/(?:tmp|home|var|work|root)\b", t)], task.id
