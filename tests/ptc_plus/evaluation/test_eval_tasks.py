"""The evaluation's task suite (benchmarks/tasks), checked without the engine.

Every script runs against the world's real tool bodies: native scripts call
the handlers one by one, code scripts run their program text in this process
with a ``tools`` namespace over the same handlers (no sandbox: what is checked
here is the script and its oracle, not the runtime). The child agent is its
child script, run the same way; ``convert_time`` is the real time server's
conversion, called in-process. Each oracle must accept the answer the scripts
give and reject a wrong one (every digit shifted) and, for tasks that change
state or meet an error, the right words without the end state behind them.
"""

from __future__ import annotations

import asyncio
import re
import sys
import textwrap
from collections.abc import Awaitable, Callable, Generator, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import jsonschema
import pytest

from hookspecs.services import ToolContext, ToolDefinition, ToolFailure
from hookspecs.types import AgentRef, JSONObject, JSONValue, ToolCall
from ptc_plus.evaluation.loading import load_suite
from ptc_plus.evaluation.task import (
    Action,
    Answer,
    Call,
    EndState,
    Observation,
    Program,
    Script,
    Style,
    Suite,
    Task,
)

ROOT = Path(__file__).resolve().parents[3]
TASKS_DIR = ROOT / "benchmarks" / "tasks"
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

SUITE: Suite = load_suite(TASKS_DIR)
TASK_IDS = [task.id for task in SUITE.tasks]
ALL_TASKS = [*SUITE.tasks, *SUITE.warmup]


# ---------------------------------------------------------------- an engine-free executor


class _Services:
    def __init__(self, workspace: Path) -> None:
        self.workspace = workspace
        self.user_id = ""
        self.protected_paths: Sequence[Path] = ()
        self.token_counter = None
        self.spill_store = None


class _ToolCallError(Exception):
    """What a program sees when a nested call fails (as the runtime's ``ToolCallError``)."""


async def _mcp_time(name: str, arguments: JSONObject) -> JSONValue:
    from mcp_server_time.server import TimeServer  # type: ignore[import-untyped]

    server = TimeServer()
    if name == "convert_time":
        result = server.convert_time(
            str(arguments["source_timezone"]), str(arguments["time"]), str(arguments["target_timezone"])
        )
    else:
        result = server.get_current_time(str(arguments["timezone"]))
    value: JSONValue = result.model_dump()
    return value


class Executor:
    """Runs a task's scripts against one world's tool handlers, with the host's argument validation."""

    def __init__(self, task: Task, workspace: Path, world: Any, tools: list[ToolDefinition], code: bool) -> None:
        self.task, self.workspace, self.world, self.code = task, workspace, world, code
        self.tools = {d.spec.name: d for d in tools}
        self.called: list[str] = []
        # A root session's family id is its own session id; a child's is its root's (what the world records).
        self.caller = AgentRef(session_id="root", agent_id="a", family_id="root")

    async def call(self, name: str, arguments: JSONObject) -> JSONValue:
        self.called.append(name)
        if name == "agent":
            child = self.task.child_code if self.code else self.task.child_native
            assert child is not None, f"{self.task.id} calls agent without a child script"
            parent, self.caller = self.caller, AgentRef(session_id="child", agent_id="a", family_id="root")
            try:
                return {"answer": await self.run(child)}
            finally:
                self.caller = parent
        if name in MCP_TOOLS:
            return await _mcp_time(name, arguments)
        definition = self.tools[name]
        jsonschema.validate(arguments, definition.spec.input_schema)
        context = ToolContext(
            call=ToolCall(
                call_id=f"c{len(self.called)}",
                tool=name,
                arguments=arguments,
                caller=self.caller,
            ),
            services=_Services(self.workspace),  # type: ignore[arg-type]
            cancelled=asyncio.Event(),
        )
        return await definition.handler(arguments, context)

    async def observe(self, action: Call | Program) -> Observation:
        try:
            if isinstance(action, Call):
                return Observation(ok=True, value=await self.call(action.tool, dict(action.arguments)))
            return Observation(ok=True, value=await self.program(action))
        except (ToolFailure, _ToolCallError) as error:
            return Observation(ok=False, error=str(error))

    async def program(self, program: Program) -> JSONValue:
        used: set[str] = set()

        def bind(name: str) -> Callable[..., Awaitable[JSONValue]]:
            async def invoke(**kwargs: Any) -> JSONValue:
                used.add(name)
                try:
                    return await self.call(name, kwargs)
                except ToolFailure as error:
                    raise _ToolCallError(f"{name}: {error}") from None

            return invoke

        names = set(self.tools) | MCP_TOOLS | {"agent"}
        namespace: dict[str, Any] = {"tools": SimpleNamespace(**{n: bind(n) for n in names})}
        namespace["ToolCallError"] = _ToolCallError
        exec(f"async def __program():\n{textwrap.indent(program.code, '    ')}\n", namespace)
        value: JSONValue = await namespace["__program"]()
        assert used <= set(program.uses), f"the program calls {sorted(used - set(program.uses))} not in uses"
        return value

    async def run(self, script: Script) -> str:
        steps: Generator[Action, Observation, None] = script()
        action = next(steps)
        while not isinstance(action, Answer):
            assert isinstance(action, Call if not self.code else Program), f"{type(action).__name__} in this style"
            action = steps.send(await self.observe(action))
        return action.text


def _fresh(task: Task, tmp_path: Path) -> tuple[Path, Any, list[ToolDefinition]]:
    workspace = tmp_path / "workspace"
    workspace.mkdir(parents=True)
    world = SUITE.world(workspace)
    task.setup(workspace, world)
    return workspace, world, SUITE.tools(workspace, world)


async def _run(task: Task, tmp_path: Path, code: bool) -> tuple[str, EndState, Executor]:
    workspace, world, tools = _fresh(task, tmp_path)
    executor = Executor(task, workspace, world, tools, code)
    answer = await executor.run(task.code if code else task.native)
    return answer, EndState(workspace=workspace, world=world), executor


def _shift_digits(text: str) -> str:
    return re.sub(r"\d", lambda m: str((int(m.group()) + 1) % 10), text)


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
    measured = {tool for task in SUITE.tasks for tool in task.queries}
    warm = {tool for task in SUITE.warmup for tool in task.queries}
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
def test_queries_name_every_tool_the_scripts_use(task: Task, tmp_path: Path) -> None:
    used: set[str] = set()
    for code in (False, True):
        _, _, executor = asyncio.run(_run(task, tmp_path / str(code), code))
        used |= set(executor.called)
    assert used == set(task.queries), f"used {sorted(used)}, queries for {sorted(task.queries)}"
    assert all(re.fullmatch(r"[a-zA-Z0-9 -]+", words) for words in task.queries.values())


def test_only_the_child_task_has_child_scripts() -> None:
    for task in ALL_TASKS:
        has_child = task.child_native is not None and task.child_code is not None
        assert has_child == (task.category == "child"), task.id


# ---------------------------------------------------------------- scripts and oracles


@pytest.mark.parametrize("code", [False, True], ids=["native", "code"])
@pytest.mark.parametrize("task", ALL_TASKS, ids=lambda t: t.id)
def test_the_scripts_answer_what_the_oracle_expects(task: Task, code: bool, tmp_path: Path) -> None:
    answer, end, _ = asyncio.run(_run(task, tmp_path, code))
    verdict = task.oracle(answer, end)
    assert verdict.passed, f"{answer!r}: {verdict.reason}"


@pytest.mark.parametrize("task", ALL_TASKS, ids=lambda t: t.id)
def test_the_oracle_rejects_a_wrong_answer(task: Task, tmp_path: Path) -> None:
    answer, end, _ = asyncio.run(_run(task, tmp_path, False))
    for wrong in (_shift_digits(answer), "I could not find out."):
        verdict = task.oracle(wrong, end)
        assert not verdict.passed and verdict.reason, wrong


@pytest.mark.parametrize("task", [t for t in ALL_TASKS if t.category in ("state", "recovery")], ids=lambda t: t.id)
def test_the_oracle_checks_the_end_state_not_only_the_words(task: Task, tmp_path: Path) -> None:
    answer, _, _ = asyncio.run(_run(task, tmp_path / "done", False))
    workspace, world, _ = _fresh(task, tmp_path / "untouched")
    verdict = task.oracle(answer, EndState(workspace=workspace, world=world))
    assert not verdict.passed and verdict.reason


def test_the_flaky_tool_fails_once_per_world_then_works(tmp_path: Path) -> None:
    task = next(t for t in SUITE.tasks if t.category == "recovery")
    _, end, executor = asyncio.run(_run(task, tmp_path, False))
    assert executor.called == ["warehouse_stock", "warehouse_stock"] and end.world.calls["warehouse_stock"] == 2


def test_the_aggregate_task_fetches_200_records_by_id(tmp_path: Path) -> None:
    task = next(t for t in SUITE.tasks if t.category == "aggregate")
    _, _, executor = asyncio.run(_run(task, tmp_path, False))
    assert executor.called.count("get_order") == 200


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

    task = next(t for t in SUITE.tasks if t.id == task_id)
    statistics = request.getfixturevalue("mature_statistics") if style is Style.PTC_PLUS_MATURE else None
    result = asyncio.run(run_task(SUITE, task, style, ENGINE_CATALOG, workdir=tmp_path, statistics=statistics))
    assert result.verdict.passed, f"{result.error} {result.verdict.reason} {result.final_text!r}"
