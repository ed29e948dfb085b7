"""Running the suite's task plans directly against the world's real tool handlers (tests only).

The handlers ``SUITE.tools`` gives are called as the host calls them
(arguments checked against the tools' input schemas, a :class:`ToolContext`
whose caller is the session's agent); ``convert_time`` is the real time
server's code, called in-process. :func:`execute` sets a task up in a fresh
workspace and world and runs its plan with the suite's ``plan_check``
executor (the child task's ``agent`` step runs the child plan as a child
session).
"""

from __future__ import annotations

import asyncio
import importlib
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import jsonschema

from hookspecs.services import ToolContext, ToolDefinition
from hookspecs.types import AgentRef, JSONObject, JSONValue, ToolCall
from ptc_plus.evaluation.loading import load_suite
from ptc_plus.evaluation.task import EndState, Suite, Task
from ptc_plus.evaluation.task_plan import TaskPlan

ROOT = Path(__file__).resolve().parents[3]
SUITE: Suite = load_suite(ROOT / "benchmarks" / "tasks")
PACKAGE = next(
    m
    for m in list(sys.modules.values())
    if m.__name__.startswith("ptc_eval_suite_") and getattr(m, "SUITE", None) is SUITE
)
PLANS: dict[str, TaskPlan] = PACKAGE.PLANS
CHILD_PLANS: dict[str, TaskPlan] = PACKAGE.CHILD_PLANS
plan_check: Any = importlib.import_module(PACKAGE.__name__ + ".plan_check")
ALL_TASKS = [*SUITE.tasks, *SUITE.warmup]
MCP_TOOLS = {"get_current_time", "convert_time"}


class _Services:
    def __init__(self, workspace: Path) -> None:
        self.workspace = workspace
        self.user_id = ""
        self.protected_paths: Sequence[Path] = ()
        self.token_counter = None
        self.spill_store = None


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


class Tools:
    """The world's tool handlers, called as the host calls them; ``called`` records (tool, caller)."""

    def __init__(self, workspace: Path, definitions: list[ToolDefinition]) -> None:
        self.workspace = workspace
        self.definitions = {d.spec.name: d for d in definitions}
        self.called: list[tuple[str, AgentRef]] = []

    async def __call__(self, name: str, arguments: JSONObject, caller: AgentRef) -> JSONValue:
        self.called.append((name, caller))
        if name in MCP_TOOLS:
            return await _mcp_time(name, arguments)
        definition = self.definitions[name]
        jsonschema.validate(arguments, definition.spec.input_schema)
        context = ToolContext(
            call=ToolCall(call_id=f"c{len(self.called)}", tool=name, arguments=arguments, caller=caller),
            services=_Services(self.workspace),  # type: ignore[arg-type]
            cancelled=asyncio.Event(),
        )
        return await definition.handler(arguments, context)


def execute(task: Task, tmp_path: Path, plan: TaskPlan | None = None) -> tuple[str, EndState, Tools, Any]:
    """Set the task up in a fresh workspace and world, run its plan directly; the answer, end state, tools."""
    workspace = tmp_path / "workspace"
    workspace.mkdir(parents=True)
    world = SUITE.world(workspace)
    task.setup(workspace, world)
    tools = Tools(workspace, SUITE.tools(workspace, world))
    executor = plan_check.PlanExecutor(tools, child=CHILD_PLANS.get(task.id))
    answer = asyncio.run(executor.run(plan or PLANS[task.id]))
    return answer, EndState(workspace=workspace, world=world), tools, executor
