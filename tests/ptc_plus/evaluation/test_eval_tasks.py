"""The evaluation's task suite (benchmarks/tasks), checked without the engine: its shape, world and filler,
every task's plan wired in, and each oracle against the answer the plan gives when executed directly
(``plan_support``: the world's real tool bodies, no model, no style). The plans' own checks are in
``test_task_plans.py``, the oracles' wrong answers in ``test_task_oracles.py``.
"""

from __future__ import annotations

import asyncio
import re
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from ptc_plus.evaluation.task import EndState, Style, Task
from ptc_plus.evaluation.task_plan import child_plans, steps_of
from tests.ptc_plus.evaluation.plan_support import ALL_TASKS, CHILD_PLANS, PLANS, SUITE, execute

REQUIRED_CATEGORIES = {
    "find-count",
    "aggregate",
    "cross-reference",
    "best-of-n",
    "multi-step",
    "long-tail",
    "child",
    "recovery",
    "one-call",
    "mcp",
    "state",
}
MCP_TOOLS = {"get_current_time", "convert_time"}


def _run(task: Task, tmp_path: Path) -> tuple[str, EndState]:
    answer, end, _, _ = execute(task, tmp_path)
    return answer, end


def _fresh(task: Task, tmp_path: Path) -> tuple[Path, Any]:
    workspace = tmp_path / "workspace"
    workspace.mkdir(parents=True)
    world = SUITE.world(workspace)
    task.setup(workspace, world)
    return workspace, world


def _shift_digits(text: str) -> str:
    return re.sub(r"\d", lambda m: str((int(m.group()) + 1) % 10), text)


def _tools(task: Task) -> set[str]:
    assert task.plan is not None
    return {step.tool for plan in (task.plan, *child_plans(task.plan).values()) for step in steps_of(plan)}


# ---------------------------------------------------------------- the suite's shape


def test_the_suite_is_versioned_and_large_enough() -> None:
    assert SUITE.version == "2"
    assert len(SUITE.tasks) >= 16 and len(SUITE.warmup) >= 4
    ids = [task.id for task in ALL_TASKS]
    assert len(ids) == len(set(ids))
    assert all(re.fullmatch(r"[tw]\d\d-[a-z0-9-]+", i) for i in ids), ids


def test_every_required_category_is_measured() -> None:
    assert {task.category for task in SUITE.tasks} >= REQUIRED_CATEGORIES


def test_warmup_tasks_differ_from_the_measured_ones_but_share_their_tools() -> None:
    assert not {t.prompt for t in SUITE.warmup} & {t.prompt for t in SUITE.tasks}
    measured = {tool for task in SUITE.tasks for tool in _tools(task)}
    warm = {tool for task in SUITE.warmup for tool in _tools(task)}
    assert warm <= measured
    assert {"get_order", "get_product", "list_order_ids", "search_files", "notes_add", "warehouse_stock"} <= warm


def test_the_world_has_its_records_and_few_enough_tools(tmp_path: Path) -> None:
    world = SUITE.world(tmp_path)
    tools = SUITE.tools(tmp_path, world)
    names = [d.spec.name for d in tools]
    assert len(names) == len(set(names))
    assert 15 <= len(names) <= 18 and not set(names) & MCP_TOOLS
    assert len(world.data.orders) >= 200 and len(world.data.customers) >= 50
    for definition in tools:
        assert definition.spec.description and definition.spec.input_schema.get("type") == "object"
        jsonschema.Draft202012Validator.check_schema(definition.spec.input_schema)


def test_the_world_is_deterministic(tmp_path: Path) -> None:
    first, second = SUITE.world(tmp_path / "a"), SUITE.world(tmp_path / "b")
    assert first.data == second.data
    assert first is not second and first.calls is not second.calls


@pytest.mark.parametrize("task", ALL_TASKS, ids=lambda t: t.id)
def test_every_task_runs_its_plan(task: Task) -> None:
    # The suite's task is the one the engine runs: its plan is the suite's PLANS entry, its first prompt the task's.
    assert task.plan is PLANS[task.id]
    assert task.plan.turns[0].prompt == task.prompt


def test_only_the_child_task_starts_a_child_and_its_step_names_the_child_plan() -> None:
    for task in ALL_TASKS:
        assert task.plan is not None
        starting = [step for step in steps_of(task.plan) if step.child is not None]
        assert bool(starting) == (task.category == "child"), task.id
        if starting:
            (step,) = starting
            assert step.tool == "agent" and step.child is CHILD_PLANS[task.id]
            assert child_plans(task.plan) == {step.arguments["prompt"]: CHILD_PLANS[task.id]}


# ---------------------------------------------------------------- oracles


@pytest.mark.parametrize("task", ALL_TASKS, ids=lambda t: t.id)
def test_the_oracle_rejects_a_wrong_answer(task: Task, tmp_path: Path) -> None:
    answer, end = _run(task, tmp_path)
    assert task.oracle(answer, end).passed
    for wrong in (_shift_digits(answer), "I could not find out."):
        verdict = task.oracle(wrong, end)
        assert not verdict.passed and verdict.reason, wrong


@pytest.mark.parametrize("task", [t for t in ALL_TASKS if t.category in ("state", "recovery")], ids=lambda t: t.id)
def test_the_oracle_checks_the_end_state_not_only_the_words(task: Task, tmp_path: Path) -> None:
    answer, _ = _run(task, tmp_path / "done")
    workspace, world = _fresh(task, tmp_path / "untouched")
    verdict = task.oracle(answer, EndState(workspace=workspace, world=world))
    assert not verdict.passed and verdict.reason


# ---------------------------------------------------------------- filler


@pytest.mark.parametrize("n", [0, 1, 200, 2000])
def test_filler_is_deterministic_and_collision_free(n: int, tmp_path: Path) -> None:
    specs = SUITE.filler(n)
    assert len(specs) == n and specs == SUITE.filler(n)
    names = [spec.name for spec in specs]
    assert len(set(names)) == n
    world_names = {d.spec.name for d in SUITE.tools(tmp_path, SUITE.world(tmp_path))}
    assert not set(names) & (world_names | MCP_TOOLS | {"agent", "tool_search", "run_code", "read_spill"})


def test_filler_starts_with_the_real_corpus(tmp_path: Path) -> None:
    specs = SUITE.filler(200)
    corpus = sys.modules["bench_catalog_data"].real_tools()  # loaded by filler from benchmarks/catalog_data.py
    taken = {d.spec.name for d in SUITE.tools(tmp_path, SUITE.world(tmp_path))} | MCP_TOOLS
    real = list(dict.fromkeys(spec.name for spec in corpus if spec.name not in taken))
    assert len(real) > 50 and [spec.name for spec in specs[: len(real)]] == real
    assert SUITE.filler(20) == specs[:20]


# ---------------------------------------------------------------- through the engine


ENGINE_TASKS = tuple(task.id for task in SUITE.tasks)
ENGINE_CATALOG = 200
"""Large enough that PTC Plus really plans (the catalog does not fit the default budget): cold runs discover."""


@pytest.fixture(scope="module")
def mature_statistics(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from ptc_plus.evaluation.matrix import WARMUP_FAMILIES
    from ptc_plus.evaluation.runner import warm_up

    workdir = tmp_path_factory.mktemp("warm-up")
    return asyncio.run(warm_up(SUITE, ENGINE_CATALOG, workdir=workdir, families=WARMUP_FAMILIES))


@pytest.mark.slow
@pytest.mark.parametrize("style", list(Style), ids=lambda s: s.value)
@pytest.mark.parametrize("task_id", ENGINE_TASKS)
def test_tasks_pass_through_the_engine(
    task_id: str, style: Style, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    from ptc_plus.evaluation.runner import run_task
    from ptc_plus.evaluation.styles import STATISTICS_STYLES

    task = next(t for t in SUITE.tasks if t.id == task_id)
    # Both mature styles (PTC Plus and tool search) read the warm-up's statistics, as the matrix gives them.
    statistics = request.getfixturevalue("mature_statistics") if style in STATISTICS_STYLES else None
    result = asyncio.run(run_task(SUITE, task, style, ENGINE_CATALOG, workdir=tmp_path, statistics=statistics))
    assert result.verdict.passed, f"{result.error} {result.verdict.reason} {result.final_text!r}"
