"""The BFCL multi-turn base category as tasks: 200 plans, their catalogs, and BFCL's state comparison as the oracle.

:func:`load_tasks` reads the category's questions and ground truth from the
pinned wheel and gives one :class:`BfclTask` per entry; :func:`make_suite` builds the engine's
``Suite``, each task a :class:`~ptc_plus.evaluation.task.Task` whose plan
every style's policy runs.

The oracle (:class:`BfclOracle`) is BFCL's ``state_checker`` on the end
state: each involved backend's public attributes equal those of a fresh
instance after the ground truth ran directly; and the final answer states
the leaves (strings, numbers) of the last ground-truth result of the last
turn that has calls. BFCL also checks the state after *every* turn and that
a turn without ground truth makes no call; the oracle sees only the end
state and the final answer, so those two are left to the engine.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from hookspecs.services import ToolDefinition
from hookspecs.types import ToolSpec
from ptc_plus.evaluation.agent_tool import AGENT
from ptc_plus.evaluation.driver import RUN_CODE, TOOL_SEARCH
from ptc_plus.evaluation.task import EndState, Suite, Task, Verdict
from ptc_plus.evaluation.task_plan import TaskPlan

from .backends import CLASS_MODULES, state_differences
from .plans import GroundTruthCall, build_plan, execute_ground_truth, missing_from
from .schemas import argument_errors, class_specs, distractors
from .wheel import SHA256, VERSION, Wheel
from .world import BfclWorld

CATEGORY = "multi_turn_base"
QUESTIONS = f"BFCL_v4_{CATEGORY}.json"
ANSWERS = f"possible_answer/BFCL_v4_{CATEGORY}.json"
SUITE_VERSION = f"bfcl-{VERSION}-2"
"""Bumped with the wheel pin or any change to how plans, catalogs or the oracle are made."""
CATALOG_SIZES = (200, 2000)
"""Besides each task's own catalog (its classes' functions)."""


@attrs.frozen(kw_only=True)
class BfclTask:
    """One BFCL entry made ready to run: its plan, its classes, its oracle."""

    id: str
    entry: Mapping[str, Any] = attrs.field(eq=False, repr=False)
    ground_truth: tuple[tuple[str, ...], ...] = attrs.field(repr=False)
    classes: tuple[str, ...]
    plan: TaskPlan = attrs.field(eq=False, repr=False)
    oracle: BfclOracle = attrs.field(eq=False, repr=False)
    conflicts: tuple[str, ...] = ()
    """Ground-truth calls whose arguments break the function doc's own schema: the host refuses them, so no
    style could follow the ground truth; such a task is left out of the suite (:func:`runnable`)."""

    @property
    def prompt(self) -> str:
        return self.plan.turns[0].prompt

    def setup(self, workspace: Path, world: BfclWorld) -> None:
        """Load the run's world with this task's fresh backends."""
        world.load(self.id, self.classes, self.entry["initial_config"])


@attrs.frozen
class BfclOracle:
    """BFCL's state comparison plus the last result in the answer (the module docstring)."""

    wheel: Wheel = attrs.field(repr=False)
    entry: Mapping[str, Any] = attrs.field(repr=False)
    ground_truth: tuple[tuple[str, ...], ...] = attrs.field(repr=False)

    def __call__(self, answer: str, end: EndState) -> Verdict:
        """The end state after the whole ground truth, and the last result of the last turn with calls."""
        world = end.world
        if not isinstance(world, BfclWorld) or world.task_id != self.entry["id"]:
            return Verdict(passed=False, reason="the world is not this task's BFCL world")
        expected, turns = execute_ground_truth(self.wheel, self.entry, self.ground_truth)
        failed = _state_failures(world, expected)
        last = next((calls[-1] for calls in reversed(turns) if calls), None)
        if last is not None:
            failed += _answer_failures(answer, last)
        return Verdict(passed=not failed, reason="; ".join(failed))

    def check_turn(self, index: int, answer: str, end: EndState, calls_at_start: int = 0) -> Verdict:
        """BFCL's check after turn ``index``: the state after the ground truth's turns up to it, and that turn's
        answer (its last result), or, for a turn without ground truth, that no call reached a backend since
        ``calls_at_start`` (the length of :attr:`BfclWorld.calls` when the turn began)."""
        world = end.world
        if not isinstance(world, BfclWorld) or world.task_id != self.entry["id"]:
            return Verdict(passed=False, reason="the world is not this task's BFCL world")
        expected, turns = execute_ground_truth(self.wheel, self.entry, self.ground_truth[: index + 1])
        failed = _state_failures(world, expected)
        if turns[index]:
            failed += _answer_failures(answer, turns[index][-1])
        elif made := [tool for tool, _ in world.calls[calls_at_start:]]:
            failed.append(f"turn {index} has no ground truth (nothing here can do it), but it called {made}")
        return Verdict(passed=not failed, reason="; ".join(failed))


def _state_failures(world: BfclWorld, expected: Mapping[str, Any]) -> list[str]:
    failed = []
    for name, instance in expected.items():
        actual = world.instances.get(name)
        differing = ["missing"] if actual is None else state_differences(actual, instance)
        if differing:
            failed.append(f"{name} differs from the ground truth's state in {', '.join(differing)}")
    return failed


def _answer_failures(answer: str, last: GroundTruthCall) -> list[str]:
    missing = missing_from(answer, last.result)
    return [f"the answer does not state {missing[:5]} of {last.tool}'s result"] if missing else []


def load_tasks(wheel: Wheel) -> tuple[BfclTask, ...]:
    """Every task of the category, in the file's order (the ground truth is run once per task to plan it)."""
    answers = {a["id"]: a["ground_truth"] for a in wheel.lines(ANSWERS)}
    tasks: list[BfclTask] = []
    for entry in wheel.lines(QUESTIONS):
        truth = tuple(tuple(turn) for turn in answers[entry["id"]])
        _, executed = execute_ground_truth(wheel, entry, truth)
        specs = {spec.name: spec for name in entry["involved_classes"] for spec in class_specs(wheel, name)}
        conflicts = tuple(
            f"{call.tool}({call.arguments}): {'; '.join(errors)}"
            for calls in executed
            for call in calls
            if (errors := argument_errors(specs[call.tool], call.arguments))
        )
        tasks.append(
            BfclTask(
                id=entry["id"],
                entry=entry,
                ground_truth=truth,
                classes=tuple(entry["involved_classes"]),
                plan=build_plan(entry, executed),
                oracle=BfclOracle(wheel, entry, truth),
                conflicts=conflicts,
            )
        )
    return tuple(tasks)


def runnable(tasks: Sequence[BfclTask]) -> tuple[BfclTask, ...]:
    """The tasks whose ground truth the host accepts (no :attr:`BfclTask.conflicts`)."""
    return tuple(task for task in tasks if not task.conflicts)


def own_specs(wheel: Wheel, task: BfclTask) -> list[ToolSpec]:
    """The task's own catalog: its classes' functions, in the order of ``involved_classes``."""
    return [spec for name in task.classes for spec in class_specs(wheel, name)]


def catalog(wheel: Wheel, task: BfclTask, size: int | None = None) -> list[ToolSpec]:
    """The task's catalog: its own functions, then distractors (:mod:`.schemas`) up to ``size`` tools.

    :raises ValueError: ``size`` is below the task's own functions or beyond the distractor pool.
    """
    own = own_specs(wheel, task)
    if size is None:
        return own
    if size < len(own):
        raise ValueError(f"{task.id} has {len(own)} functions of its own, more than {size}")
    return [*own, *distractors(wheel, task.classes, [s.name for s in own], size - len(own))]


def filler(wheel: Wheel, n: int) -> list[ToolSpec]:
    """Task-independent filler for the engine's ``Suite.filler``: the pool after all eight classes' functions.

    It never collides with any task's tools, but it starts past the other classes' docs that
    :func:`catalog` puts first; a per-task filler in the engine would use :func:`catalog` instead.
    """
    every = list(CLASS_MODULES)
    return distractors(wheel, every, [s.name for name in every for s in class_specs(wheel, name)], n)


def make_task(task: BfclTask) -> Task:
    """The engine's :class:`Task` for ``task``: every style runs its plan through the policy."""
    return Task(
        id=task.id.replace("_", "-"),
        category="bfcl-" + CATEGORY.replace("_", "-"),
        prompt=task.prompt,
        setup=task.setup,
        oracle=task.oracle,
        plan=task.plan,
    )


FOLDS = 2
"""Every task is measured, so the mature styles' warm-up comes from the other fold: task ``i`` (in the suite's
order) is in fold ``i % FOLDS``, and its warm-up families are tasks of the other folds, never itself."""
WARMUP_SPREAD = 10
"""How many tasks of the other folds a warm-up set lists, spread evenly over them (so the families cover the
backends, not the file's first class): at least the matrix's default warm-up families."""


def warmup_sets(tasks: Sequence[Task]) -> dict[str, tuple[Task, ...]]:
    """By task id, the warm-up set of its fold (:data:`FOLDS`): evenly spaced tasks of the other folds."""
    sets: dict[str, tuple[Task, ...]] = {}
    for fold in range(FOLDS):
        others = [task for index, task in enumerate(tasks) if index % FOLDS != fold]
        step = max(1, len(others) // WARMUP_SPREAD)
        chosen = tuple(others[::step][:WARMUP_SPREAD])
        sets.update({task.id: chosen for index, task in enumerate(tasks) if index % FOLDS == fold})
    return sets


def source(wheel: Wheel) -> str:
    """Where the tasks come from, for the report: the wheel's name, version, digest and licence."""
    return (
        f"BFCL multi-turn base category from `bfcl-eval` {VERSION} (wheel sha256 `{SHA256}`, fetched with "
        f"`pip download --no-deps`, never installed), Apache License 2.0, © the Gorilla / BFCL authors"
    )


def make_suite(wheel: Wheel, tasks: Sequence[BfclTask] | None = None) -> Suite:
    """The engine's :class:`Suite` over the runnable BFCL tasks: every task is measured (no warm-up set of its
    own; the mature styles warm up on the other fold, :func:`warmup_sets`), each at its own catalog or with
    distractors chosen for its classes (:func:`catalog`), without the MCP bridge's tools."""
    chosen = runnable(load_tasks(wheel)) if tasks is None else tuple(tasks)
    engine = tuple(make_task(t) for t in chosen)
    by_id = {made.id: task for made, task in zip(engine, chosen, strict=True)}
    warmups = warmup_sets(engine)

    def tools(workspace: Path, world: BfclWorld) -> list[ToolDefinition]:
        return world.tools()

    def task_filler(task: Task, n: int) -> list[ToolSpec]:
        bfcl = by_id[task.id]
        # Not the names the harness gives its own tools (the pool has a `tool_search` of its own).
        taken = [*(spec.name for spec in own_specs(wheel, bfcl)), RUN_CODE, TOOL_SEARCH, AGENT]
        return distractors(wheel, bfcl.classes, taken, n)

    return Suite(
        version=SUITE_VERSION,
        tasks=engine,
        warmup=(),
        world=lambda workspace: BfclWorld(wheel=wheel),
        tools=tools,
        filler=functools.partial(filler, wheel),
        task_filler=task_filler,
        mcp=False,
        source=source(wheel),
        warmup_for=lambda task: warmups[task.id],
    )
