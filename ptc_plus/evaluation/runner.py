"""Run one task in one style at one catalog size on the reference host, for real; and the warm-up.

Every run is isolated: a fresh directory ``workdir/run`` (emptied first) holding its own
workspace, host state and user directories (:mod:`.styles`). Its host tools
are the suite's world tools, the MCP bridge's tools, the ``agent`` tool and
schema-only filler tools, exactly ``catalog`` in all. The model is a
:class:`~ptc_plus.evaluation.policy.PlanDriver` over the task's plan in the
run's style, or a real model a factory makes (real-model mode). The oracle judges the root
session's final answer and the end state; a run that breaks (an engine error,
a host error) is a failed verdict that says why.
"""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import Any

import attrs

from hookspecs import AgentRef, JSONObject, JSONValue, ToolContext, ToolDefinition, ToolFailure
from hookspecs.reference import HostError, Model, ModelRequest, ReferenceHost
from hookspecs.types import ToolSpec
from ptc_plus.doors import embedded
from ptc_plus.errors import PtcError
from ptc_plus.evaluation.agent_tool import agent_tool
from ptc_plus.evaluation.driver import RUN_CODE, TOOL_SEARCH, ExchangeLog, RecordingModel, SessionIds
from ptc_plus.evaluation.errors import (
    CatalogTooSmall,
    CodeModeUnavailable,
    ContextExceeded,
    DuplicateToolName,
    EvaluationError,
    FillerToolCalled,
    NoWarmUpTasks,
    PlanMissing,
    StatisticsNotProduced,
    StatisticsRequired,
    WarmUpFailed,
)
from ptc_plus.evaluation.exchange import Exchange, ProviderUsage, RunResult
from ptc_plus.evaluation.mcp_bridge import McpBridge
from ptc_plus.evaluation.metering import Meter
from ptc_plus.evaluation.policy import DEFAULT_CONTEXT_TOKENS, PlanDriver
from ptc_plus.evaluation.styles import (
    CODE_STYLES,
    DEFAULTS,
    STATISTICS_STYLES,
    Parameters,
    UserDirs,
    isolated_environment,
    setup_for,
    write_config,
)
from ptc_plus.evaluation.task import OWN_CATALOG, EndState, Style, Suite, Task, Verdict
from ptc_plus.evaluation.task_plan import child_plans
from ptc_plus.evaluation.tool_search import most_used_tools
from ptc_plus.plugin import controller
from ptc_plus.statistics import workspace_store

__all__ = ["Exchange", "ModelFactory", "Parameters", "ProviderUsage", "RunResult", "run_task", "warm_up"]

ModelFactory = Callable[[Task, Style], Model]
"""Real-model mode: the model of one session of ``task`` in ``style`` (called for the root and each child)."""

USER_ID = "eval-user"

MAX_STEPS = 512
"""Model steps a turn may take. A native model fetching 200 records one call per step needs 200 and more;
hosts built for agents allow that many (the reference host's default of 32 is for its own tests and the demo)."""


def _fresh(root: Path) -> Path:
    """``root``, emptied: every run of a matrix works at the same path, because the path is part of what the
    model is sent (the system prompt names the workspace) and a random one would change the token counts."""
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    return root


HARNESS_TOOLS = (RUN_CODE, TOOL_SEARCH)
"""Tool names the styles add to a catalog (``run_code``, ``tool_search``): no catalog tool may have one."""

PORTABLE_RUN = "/eval/run"
"""How the recorded exchanges write the run directory: the host's prompt names the workspace, and its real
path (``TMPDIR``, the uid, a clone's location) must not change a count."""


def _portable(value: Any, real: str) -> Any:
    if isinstance(value, str):
        return value.replace(real, PORTABLE_RUN)
    if isinstance(value, dict):
        return {key: _portable(inner, real) for key, inner in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_portable(inner, real) for inner in value)
    return value


def portable_request(request: ModelRequest, root: Path) -> ModelRequest:
    """``request`` with the run directory ``root`` written as :data:`PORTABLE_RUN`."""
    real = str(root.resolve())
    return attrs.evolve(request, system=_portable(request.system, real), messages=_portable(request.messages, real))


def portable(exchange: Exchange, root: Path) -> Exchange:
    """``exchange`` with the run directory ``root`` written as :data:`PORTABLE_RUN` in what the host sent."""
    return attrs.evolve(exchange, request=portable_request(exchange.request, root))


def filler_definition(spec: ToolSpec, failures: list[EvaluationError]) -> ToolDefinition:
    """A schema-only tool: it fills the catalog; a call is a script's bug, reported and refused."""

    async def refuse(arguments: JSONObject, context: ToolContext) -> JSONValue:
        error = FillerToolCalled(tool=spec.name)
        failures.append(error)
        raise ToolFailure(error.code, error.message())

    return ToolDefinition(spec=spec, handler=refuse)


def catalog_tools(
    suite: Suite,
    own: Sequence[ToolDefinition],
    catalog: int,
    failures: list[EvaluationError],
    task: Task | None = None,
) -> list[ToolDefinition]:
    """``own`` (world, MCP, agent) then filler up to exactly ``catalog`` tools (the suite's filler for ``task``
    when it has one); :data:`OWN_CATALOG`: ``own`` alone. Names must be distinct."""
    needed = len(own)
    if catalog == OWN_CATALOG:
        fill: list[ToolSpec] = []
    elif needed > catalog:
        raise CatalogTooSmall(catalog=catalog, needed=needed)
    elif suite.task_filler is not None and task is not None:
        fill = suite.task_filler(task, catalog - needed)
    else:
        fill = suite.filler(catalog - needed)
    every = [*own, *(filler_definition(s, failures) for s in fill)]
    # The harness's own tools (code mode's, tool search's) come later, from the style: a catalog tool of their
    # name would collide in some styles only, and fail those runs for a reason none of the others has.
    seen: set[str] = set(HARNESS_TOOLS)
    for definition in every:
        if definition.spec.name in seen:
            raise DuplicateToolName(name=definition.spec.name)
        seen.add(definition.spec.name)
    return every


@contextlib.asynccontextmanager
async def _bridge(given: McpBridge | None) -> AsyncIterator[McpBridge]:
    if given is not None:
        yield given
        return
    async with McpBridge.time_server() as bridge:
        yield bridge


async def run_task(
    suite: Suite,
    task: Task,
    style: Style,
    catalog: int,
    *,
    workdir: Path,
    model: ModelFactory | None = None,
    statistics: Path | None = None,
    parameters: Parameters = DEFAULTS,
    mcp: McpBridge | None = None,
    context_tokens: int = DEFAULT_CONTEXT_TOKENS,
    meter: Meter | None = None,
) -> RunResult:
    """Run ``task`` in ``style`` with ``catalog`` host tools in ``workdir/run`` (emptied first: same path, same prompt).

    :param model: real-model mode's factory; ``None`` drives the task's plan (:class:`PlanDriver`).
    :param statistics: the store :func:`warm_up` returned; required by (and only used by) the mature style.
    :param parameters: PTC Plus settings this run overrides (default: none, the plugin's defaults).
    :param mcp: a running bridge to share between runs (its server is stateless); ``None`` starts one.
    :param context_tokens: the model's context: a scripted request beyond it makes the run not runnable
        (``RunResult.not_runnable``), whatever the style.
    :param meter: what sizes the scripted requests: the matrix's, so a request is sized as it is metered (its
        host prompt included); ``None``: a meter without a host prompt.
    :raises StatisticsRequired: a mature style without ``statistics``.
    :raises CatalogTooSmall: the suite's own tools exceed ``catalog``.
    :raises DuplicateToolName: two tools of the catalog share a name.
    Everything that goes wrong while the session runs is in the result (``error``, a failed verdict).
    """
    if style in STATISTICS_STYLES and statistics is None:
        raise StatisticsRequired(style=style.value)
    root = _fresh(workdir / "run")
    workspace = root / "workspace"
    workspace.mkdir()
    always = most_used_tools(statistics) if style is Style.TOOL_SEARCH_MATURE and statistics is not None else ()
    setup = setup_for(style, parameters, always=always)
    write_config(workspace, setup)
    if style is Style.PTC_PLUS_MATURE and statistics is not None:
        target = workspace_store(workspace).path
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(statistics, target)
    world = suite.world(workspace)
    task.setup(workspace, world)
    log = ExchangeLog()
    failures: list[EvaluationError] = []
    final_text, error, not_runnable = "", "", ""
    async with _bridge(mcp) as bridge:
        own = [*suite.tools(workspace, world), *(bridge.tools if suite.mcp else ())]
        with isolated_environment(UserDirs.under(root / "user")):
            try:
                final_text = await _session(
                    suite,
                    task,
                    style,
                    setup.plugins,
                    own,
                    catalog,
                    workspace,
                    root / "state",
                    log,
                    failures,
                    model,
                    context_tokens,
                    meter,
                )
            except (CatalogTooSmall, DuplicateToolName):
                raise
            except ContextExceeded as exc:
                not_runnable = _describe(exc)
            except (PtcError, HostError) as exc:
                error = _describe(exc)
    exceeded = [f for f in failures if isinstance(f, ContextExceeded)]
    if exceeded and not not_runnable:  # a child's request did not fit: the family cannot run either
        not_runnable = _describe(exceeded[0])
    if failures:  # an engine error inside a tool body (a filler called, a child's plan) caused what followed
        error = _describe(failures[0])
    if not_runnable:
        error = ""
        verdict = Verdict(passed=False, reason=not_runnable)
    elif error:
        verdict = Verdict(passed=False, reason=error)
    else:
        verdict = task.oracle(final_text, EndState(workspace=workspace, world=world))
    return RunResult(
        task=task,
        style=style,
        catalog=catalog,
        exchanges=tuple(portable(exchange, root) for exchange in log.exchanges),
        final_text=final_text,
        verdict=verdict,
        error=error,
        not_runnable=not_runnable,
    )


def _describe(error: PtcError | HostError) -> str:
    text = error.message("en")
    return text if text.startswith(error.code) else f"{error.code}: {text}"


async def _session(
    suite: Suite,
    task: Task,
    style: Style,
    plugins: Sequence[object],
    own: list[ToolDefinition],
    catalog: int,
    workspace: Path,
    state: Path,
    log: ExchangeLog,
    failures: list[EvaluationError],
    model: ModelFactory | None,
    context_tokens: int = DEFAULT_CONTEXT_TOKENS,
    sizing: Meter | None = None,
) -> str:
    """One family: the root session's turn(s) with the task's prompt (a plan's turns in order); returns the
    root's last final answer."""
    children = 0
    meter = (sizing or Meter()) if model is None and task.plan is not None else None
    schemas: dict[str, bool] = {}

    def plan_driver(ids: SessionIds, *, root: bool, prefix: str) -> PlanDriver:
        if task.plan is None:
            raise PlanMissing(task=task.id, prompt=task.prompt)
        return PlanDriver(
            task_id=task.id,
            plan=task.plan if root else None,
            style=style,
            log=log,
            ids=ids,
            call_prefix=prefix,
            children=child_plans(task.plan),
            output_schemas=schemas,
            context_tokens=context_tokens,
            meter=meter,
            # Sized as metered: the run directory as /eval/run, so whether a run fits never depends on TMPDIR.
            sized_as=lambda request: portable_request(request, workspace.parent),
        )

    def child_model(ids: SessionIds) -> Model:
        nonlocal children
        children += 1
        if model is not None:
            return RecordingModel(model(task, style), log=log, ids=ids)
        return plan_driver(ids, root=False, prefix=f"child{children}")

    holder: list[ReferenceHost] = []
    keep = frozenset({RUN_CODE}) if style in CODE_STYLES else frozenset()
    agent = agent_tool(lambda: holder[0], child_model, keep=keep, failures=failures)
    host_tools = catalog_tools(suite, [*own, agent], catalog, failures, task)
    schemas.update({d.spec.name: d.spec.output_schema is not None for d in host_tools})
    async with embedded(
        workspace,
        state=state,
        tools=host_tools,
        plugins=plugins,
        entry_points=False,
        user=USER_ID,
        max_steps=MAX_STEPS,
    ) as host:
        holder.append(host)
        ids = SessionIds()
        root_model: Model
        if model is not None:
            root_model = RecordingModel(model(task, style), log=log, ids=ids)
        else:
            root_model = plan_driver(ids, root=True, prefix="call")
        session = await host.start_session(title=task.id, model=root_model)
        ids.session_id = session.agent.session_id
        if style in CODE_STYLES:
            _require_code_mode(host, session.agent, style)
        prompts = [t.prompt for t in task.plan.turns] if task.plan is not None and model is None else [task.prompt]
        final_text = ""
        for prompt in prompts:
            final_text = (await session.run_turn(prompt)).final_text
        return final_text


def _require_code_mode(host: ReferenceHost, agent: AgentRef, style: Style) -> None:
    """A code style whose session started native would measure the native style under the wrong name."""
    state = controller(host.services).session(agent)
    environment = state.environment if state is not None else None
    if environment is None or not environment.ptc:
        reason = environment.native_reason if environment is not None else "no PTC Plus session"
        raise CodeModeUnavailable(style=style.value, reason=reason or "-")


async def warm_up(
    suite: Suite,
    catalog: int,
    *,
    workdir: Path,
    families: int,
    parameters: Parameters = DEFAULTS,
    mcp: McpBridge | None = None,
    tasks: Sequence[Task] | None = None,
) -> Path:
    """Run ``families`` warm-up families (``tasks``, default ``suite.warmup``, in turn) in PTC Plus style, in one
    workspace and one user directory as a user's sessions would accumulate; returns the statistics store they
    made (overwritten by the next warm-up in ``workdir``: copy it to keep it).

    The mature style copies that file into each of its runs' workspaces. Each family gets a fresh world
    and its task's setup; every family must pass its oracle, else statistics from it would mislead.

    :raises NoWarmUpTasks: the suite has none.
    :raises WarmUpFailed: a family failed (its error or its oracle's reason).
    :raises StatisticsNotProduced: no store was written.
    """
    warmup = tuple(suite.warmup if tasks is None else tasks)
    if not warmup:
        raise NoWarmUpTasks(version=suite.version)
    root = _fresh(workdir / "warm-up")
    workspace = root / "workspace"
    workspace.mkdir()
    setup = setup_for(Style.PTC_PLUS_COLD, parameters)
    write_config(workspace, setup)
    async with _bridge(mcp) as bridge:
        with isolated_environment(UserDirs.under(root / "user")):
            for number in range(families):
                task = warmup[number % len(warmup)]
                world = suite.world(workspace)
                task.setup(workspace, world)
                log = ExchangeLog()
                failures: list[EvaluationError] = []
                own = [*suite.tools(workspace, world), *(bridge.tools if suite.mcp else ())]
                try:
                    final_text = await _session(
                        suite,
                        task,
                        Style.PTC_PLUS_COLD,
                        setup.plugins,
                        own,
                        catalog,
                        workspace,
                        root / "state",
                        log,
                        failures,
                        None,
                    )
                except (CatalogTooSmall, DuplicateToolName):
                    raise
                except (PtcError, HostError) as exc:
                    raise WarmUpFailed(task=task.id, reason=_describe(exc)) from exc
                if failures:
                    raise WarmUpFailed(task=task.id, reason=_describe(failures[0]))
                verdict = task.oracle(final_text, EndState(workspace=workspace, world=world))
                if not verdict.passed:
                    raise WarmUpFailed(task=task.id, reason=verdict.reason)
    path = workspace_store(workspace).path
    if not path.is_file():
        raise StatisticsNotProduced(path=str(path))
    return path
