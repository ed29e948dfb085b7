"""The whole evaluation matrix: tasks × styles × catalog sizes (× repetitions), metered into :class:`Results`.

Per catalog size the warm-up families run once (only when the mature style is
measured) and every mature run starts from the statistics they left. Every
run works in the same directory under ``workdir``, emptied before it (the workspace path is in the prompt, so
one path keeps the styles' counts comparable; see :func:`~ptc_plus.evaluation.runner.run_task`). A run that raises is a
failed run with the error as its reason, so one broken task cannot hide the
others' numbers; the report lists it.

Scripted mode meters every request with :class:`~ptc_plus.evaluation.metering.Meter`
(the project's tokenizer); real-model mode takes the provider's numbers.
"""

from __future__ import annotations

import asyncio
import gc
import os
import platform
import shutil
import sys
from collections.abc import Awaitable, Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, wait
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import attrs

from hookspecs.reference import Model
from ptc_plus.discovery import ranker_name
from ptc_plus.errors import PtcError, UsageError
from ptc_plus.evaluation import jobs as jobs_
from ptc_plus.evaluation import runner
from ptc_plus.evaluation.errors import CatalogTooSmall, DuplicateToolName
from ptc_plus.evaluation.exchange import RunResult
from ptc_plus.evaluation.host_prompt import DEFAULT_SETTING, SETTINGS, HostPromptModel
from ptc_plus.evaluation.host_prompt import host_prompt as host_prompt_text
from ptc_plus.evaluation.jobs import default_jobs
from ptc_plus.evaluation.mcp_bridge import McpBridge
from ptc_plus.evaluation.metering import (
    MIN_CACHEABLE_PREFIX,
    PROVIDER_UNIT,
    UNIT,
    Meter,
    RunMeter,
    meter_provider,
    o200k_counter,
)
from ptc_plus.evaluation.policy import DEFAULT_CONTEXT_TOKENS
from ptc_plus.evaluation.prices import DEFAULT, PriceSheet
from ptc_plus.evaluation.results import MODEL, NOT_RUNNABLE, RAN, SCRIPTED, Results, RunRecord
from ptc_plus.evaluation.styles import DEFAULTS, STATISTICS_STYLES, Parameters
from ptc_plus.evaluation.task import Style, Suite, Task

DEFAULT_CATALOGS = (20, 200, 2000)
WARMUP_FAMILIES = 10
"""How many warm-up families build the mature statistics (fixed before measuring): at least the default
``min_samples`` (5), so the statistics vote, and fewer than the default window (20), as a user's first weeks."""

ModelFactory = runner.ModelFactory
Progress = Callable[[RunRecord], None]
AfterRun = Callable[[], Awaitable[None]]


class UnknownTask(UsageError):
    """``--task`` names no task of the suite.

    :ivar params: ``task``, ``known`` (the suite's task ids).
    """

    code = "PTC-7422"


def select_tasks(suite: Suite, ids: Sequence[str]) -> tuple[Task, ...]:
    """The suite's tasks named by ``ids`` in suite order; every task when ``ids`` is empty."""
    known = {task.id for task in suite.tasks}
    for wanted in ids:
        if wanted not in known:
            raise UnknownTask(task=wanted, known=", ".join(sorted(known)))
    return tuple(task for task in suite.tasks if not ids or task.id in ids)


def run_count(tasks: Sequence[Task], styles: Sequence[Style], catalogs: Sequence[int], repetitions: int) -> int:
    """The runs the matrix makes (one progress tick each)."""
    return len(tasks) * len(styles) * len(catalogs) * repetitions


async def run_matrix(
    suite: Suite,
    *,
    tasks: Sequence[Task],
    styles: Sequence[Style],
    catalogs: Sequence[int],
    workdir: Path,
    model: ModelFactory | None = None,
    model_name: str = "",
    repetitions: int = 1,
    progress: Progress | None = None,
    after_run: AfterRun | None = None,
    command: str = "",
    warmup_families: int = WARMUP_FAMILIES,
    parameters: Parameters = DEFAULTS,
    context_tokens: int = DEFAULT_CONTEXT_TOKENS,
    host_prompt: str = DEFAULT_SETTING,
    prices: PriceSheet = DEFAULT,
    jobs: int = 1,
    suite_directory: Path | None = None,
) -> Results:
    """Run every (catalog, style, task, repetition) and return the metered results.

    One MCP bridge (the time server) serves every run: the server is stateless, and starting it
    once keeps a 240-run matrix from spawning 240 servers.

    :param model: real-model mode: makes the model of each session (scripted mode when ``None``).
    :param progress: called after each run with its record (a progress bar ticks on it).
    :param after_run: awaited after each run (real-model mode closes that run's clients).
    :param command: the command line that regenerates these results (written into the report).
    :param parameters: PTC Plus settings every run (and the warm-up) uses instead of the plugin's defaults.
    :param context_tokens: the model's context: a run with a larger request is recorded as not runnable.
    :param host_prompt: the host system prompt setting (:data:`~ptc_plus.evaluation.host_prompt.SETTINGS`):
        metered first in every scripted request, sent first in every real-model request.
    :param prices: the price sheet the report's cost-weighted headline uses (recorded in the results).
    :param jobs: scripted runs side by side in this many worker processes (:mod:`.jobs`, ADR 0119), each
        loading the suite from ``suite_directory``; the records and every count are those of one process.
        Real-model mode, or no ``suite_directory``, runs one at a time.
    :raises CatalogTooSmall: a catalog size below the suite's own tools (no run can be measured there).
    """
    counter = o200k_counter()
    prompt = host_prompt_text(SETTINGS[host_prompt], counter.count)
    # The run directory's path (TMPDIR, uid) is metered as one fixed path: counts must not depend on who ran.
    meter = Meter(counter, host_prompt=prompt, run_root=workdir) if model is None else None
    if model is not None and prompt:
        model = _sending(model, prompt)
    if jobs > 1 and model is None and suite_directory is not None:
        setup = jobs_.WorkerSetup(
            suite_directory=suite_directory,
            workdir=workdir,
            host_prompt=prompt,
            parameters=parameters,
            context_tokens=context_tokens,
        )
        records = await asyncio.to_thread(
            _side_by_side, suite, setup, jobs, tasks, styles, catalogs, repetitions, warmup_families, progress
        )
    else:
        try:
            records = await _one_by_one(
                suite,
                tasks=tasks,
                styles=styles,
                catalogs=catalogs,
                workdir=workdir,
                model=model,
                meter=meter,
                repetitions=repetitions,
                progress=progress,
                after_run=after_run,
                warmup_families=warmup_families,
                parameters=parameters,
                context_tokens=context_tokens,
            )
        finally:
            gc.unfreeze()  # the caller's process is not ours to keep frozen (a test's, a benchmark's)
    return Results(
        suite_version=suite.version,
        unit=UNIT if model is None else PROVIDER_UNIT,
        mode=SCRIPTED if model is None else MODEL,
        model=model_name if model is not None else "",
        repetitions=repetitions,
        catalogs=tuple(catalogs),
        styles=tuple(style.value for style in styles),
        tasks=tuple(task.id for task in tasks),
        measured_at=measured_at(),
        python=platform.python_version(),
        platform=f"{sys.platform} {platform.machine()}",
        command=command,
        discovery=ranker_name(),
        runs=tuple(records),
        prices=prices,
        host_prompt=host_prompt,
        host_prompt_tokens=counter.count(prompt) if prompt else 0,
        min_cacheable_prefix=MIN_CACHEABLE_PREFIX,
        source=suite.source,
    )


async def _one_by_one(
    suite: Suite,
    *,
    tasks: Sequence[Task],
    styles: Sequence[Style],
    catalogs: Sequence[int],
    workdir: Path,
    model: ModelFactory | None,
    meter: Meter | None,
    repetitions: int,
    progress: Progress | None,
    after_run: AfterRun | None,
    warmup_families: int,
    parameters: Parameters,
    context_tokens: int,
) -> list[RunRecord]:
    """Every run in this process, one at a time, in the matrix's order (the heap settled between runs)."""
    records: list[RunRecord] = []
    async with McpBridge.time_server() as bridge:
        for catalog in catalogs:
            warm: dict[tuple[str, ...], Path | str] = {}
            if STATISTICS_STYLES & set(styles):
                for task in tasks:
                    key = tuple(t.id for t in suite.warmup_of(task))
                    if key not in warm:
                        warm[key] = await _warm_up(suite, task, catalog, workdir, warmup_families, parameters, bridge)
                        jobs_.settle_heap()
            for style in styles:
                for task in tasks:
                    warmed = warm.get(tuple(t.id for t in suite.warmup_of(task)), "")
                    statistics = warmed if isinstance(warmed, Path) else None
                    warm_error = warmed if isinstance(warmed, str) else ""
                    for repetition in range(repetitions):
                        if style in STATISTICS_STYLES and warm_error:
                            record = _failed(task, style, catalog, repetition, warm_error)
                        else:
                            run = RunAt(task=task, style=style, catalog=catalog, repetition=repetition, where=workdir)
                            try:
                                record = await run_one(
                                    suite, run, model, statistics, meter, bridge, parameters, context_tokens
                                )
                            finally:
                                if after_run is not None:
                                    await after_run()
                        records.append(record)
                        jobs_.settle_heap()
                        if progress is not None:
                            progress(record)
    return records


async def _warm_up(
    suite: Suite,
    task: Task,
    catalog: int,
    workdir: Path,
    families: int,
    parameters: Parameters,
    bridge: McpBridge,
) -> Path | str:
    """The statistics of ``task``'s warm-up set at ``catalog`` (kept apart: the next warm-up reuses the
    directory), or why the warm-up failed."""
    try:
        made = await runner.warm_up(
            suite,
            catalog,
            workdir=workdir,
            families=families,
            parameters=parameters,
            mcp=bridge,
            tasks=suite.warmup_of(task),
        )
    except (CatalogTooSmall, DuplicateToolName):
        raise
    except PtcError as error:
        return f"warm-up failed: {error.code}: {error.message('en')}"
    store = workdir / "statistics"
    store.mkdir(exist_ok=True)
    kept = store / f"{catalog}-{sum(1 for _ in store.iterdir())}{made.suffix}"
    shutil.copyfile(made, kept)
    return kept


async def warm_up_into(
    suite: Suite,
    task: Task,
    catalog: int,
    workdir: Path,
    families: int,
    parameters: Parameters,
    bridge: McpBridge,
    keep: Path,
) -> Path | str:
    """As :func:`_warm_up`, the store copied to ``keep`` (a worker of :mod:`.jobs`: the caller names it)."""
    made = await _warm_up(suite, task, catalog, workdir, families, parameters, bridge)
    if isinstance(made, str):
        return made
    keep.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(made, keep)
    return keep


def measured_at(env: Mapping[str, str] | None = None) -> str:
    """Now (UTC, ISO 8601, seconds); ``SOURCE_DATE_EPOCH`` when set (the reproducible-builds convention), so
    two runs of the same matrix on two machines can be compared byte for byte."""
    epoch = (os.environ if env is None else env).get("SOURCE_DATE_EPOCH", "").strip()
    moment = datetime.fromtimestamp(int(epoch), UTC) if epoch.isdigit() else datetime.now(UTC)
    return moment.replace(microsecond=0).isoformat()


def _sending(factory: ModelFactory, prompt: str) -> ModelFactory:
    def make(task: Task, style: Style) -> Model:
        return HostPromptModel(factory(task, style), prompt)

    return make


@attrs.frozen(kw_only=True)
class RunAt:
    """Where and what one run is (the matrix's unit of work)."""

    task: Task
    style: Style
    catalog: int
    repetition: int
    where: Path


async def run_one(
    suite: Suite,
    run: RunAt,
    model: ModelFactory | None,
    statistics: Path | None,
    meter: Meter | None,
    bridge: McpBridge,
    parameters: Parameters,
    context_tokens: int = DEFAULT_CONTEXT_TOKENS,
) -> RunRecord:
    try:
        result = await runner.run_task(
            suite,
            run.task,
            run.style,
            run.catalog,
            workdir=run.where,
            model=model,
            statistics=statistics if run.style in STATISTICS_STYLES else None,
            parameters=parameters,
            mcp=bridge,
            context_tokens=context_tokens,
            meter=meter,
        )
    except (CatalogTooSmall, DuplicateToolName):
        raise
    except PtcError as error:
        return _failed(run.task, run.style, run.catalog, run.repetition, f"{error.code}: {error.message('en')}")
    except Exception as error:  # an engine defect in one run must not lose the matrix's other numbers
        return _failed(run.task, run.style, run.catalog, run.repetition, f"{type(error).__name__}: {error}")
    metered = meter.meter(result.exchanges) if meter is not None else meter_provider(result.exchanges)
    return record_of(result, metered, run.repetition)


def _side_by_side(
    suite: Suite,
    setup: jobs_.WorkerSetup,
    jobs: int,
    tasks: Sequence[Task],
    styles: Sequence[Style],
    catalogs: Sequence[int],
    repetitions: int,
    warmup_families: int,
    progress: Progress | None,
) -> list[RunRecord]:
    """The matrix's runs in ``jobs`` worker processes (:mod:`.jobs`); the records in the order
    :func:`_one_by_one` makes them. The warm-ups go first (a warm-up's families run in turn, so they are the
    longest chain), every run that needs no statistics beside them, and a mature run when its warm-up is done."""
    Slot = tuple[int, Style, Task, int]  # catalog, style, task, repetition
    slots: list[Slot] = [
        (catalog, style, task, repetition)
        for catalog in catalogs
        for style in styles
        for task in tasks
        for repetition in range(repetitions)
    ]

    def warm_key(catalog: int, task: Task) -> tuple[int, tuple[str, ...]]:
        return catalog, tuple(t.id for t in suite.warmup_of(task))

    def spec(slot: Slot, statistics: Path | None) -> jobs_.RunSpec:
        catalog, style, task, repetition = slot
        return jobs_.RunSpec(
            task=task.id, style=style.value, catalog=catalog, repetition=repetition, statistics=statistics
        )

    records: list[RunRecord | None] = [None] * len(slots)

    def settled(n: int, record: RunRecord) -> None:
        records[n] = record
        if progress is not None:
            progress(record)

    pool = jobs_.Pool(setup, jobs)
    try:
        pending: dict[Future[Any], tuple[int, tuple[int, tuple[str, ...]]]] = {}
        waiting: dict[tuple[int, tuple[str, ...]], list[int]] = {}
        for catalog, style, task, _ in slots:
            key = warm_key(catalog, task)
            if style in STATISTICS_STYLES and key not in waiting:
                waiting[key] = []
                keep = setup.workdir / "statistics" / f"{catalog}-{len(waiting) - 1}.json"
                warm = jobs_.WarmUpSpec(task=task.id, catalog=catalog, families=warmup_families, keep=keep)
                pending[pool.submit(_worker_warm, warm)] = (-1, key)
        for n, slot in enumerate(slots):
            if slot[1] in STATISTICS_STYLES:
                waiting[warm_key(slot[0], slot[2])].append(n)
            else:
                pending[pool.submit(_worker_run, spec(slot, None))] = (n, (0, ()))
        while pending:
            finished, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in finished:
                n, key = pending.pop(future)
                value = jobs_.unrefused(future.result())
                if n >= 0:
                    settled(n, value)
                    continue
                for m in waiting.pop(key):
                    catalog, style, task, repetition = slots[m]
                    if isinstance(value, str):
                        settled(m, _failed(task, style, catalog, repetition, value))
                    else:
                        pending[pool.submit(_worker_run, spec(slots[m], value))] = (m, (0, ()))
    finally:
        pool.close()
    done = [record for record in records if record is not None]
    assert len(done) == len(slots), "a run of the matrix was never settled"
    return done


def _worker_run(spec: jobs_.RunSpec) -> RunRecord | jobs_.Refused:
    """In a worker of :mod:`.jobs`: one run's record, or the refusal that stops the matrix."""
    state = jobs_.worker()
    run = RunAt(
        task=state.tasks[spec.task],
        style=Style(spec.style),
        catalog=spec.catalog,
        repetition=spec.repetition,
        where=state.where,
    )
    try:
        return state.runner.run(
            run_one(
                state.suite,
                run,
                None,
                spec.statistics,
                state.meter,
                state.bridge,
                state.setup.parameters,
                state.setup.context_tokens,
            )
        )
    except (CatalogTooSmall, DuplicateToolName) as error:
        return jobs_.refused(error)
    finally:
        jobs_.settle_heap()


def _worker_warm(spec: jobs_.WarmUpSpec) -> Path | str | jobs_.Refused:
    """In a worker of :mod:`.jobs`: a warm-up's store (copied to ``spec.keep``), why it failed, or a refusal."""
    state = jobs_.worker()
    try:
        return state.runner.run(
            warm_up_into(
                state.suite,
                state.tasks[spec.task],
                spec.catalog,
                state.where,
                spec.families,
                state.setup.parameters,
                state.bridge,
                spec.keep,
            )
        )
    except (CatalogTooSmall, DuplicateToolName) as error:
        return jobs_.refused(error)
    finally:
        jobs_.settle_heap()


def record_of(result: RunResult, metered: RunMeter, repetition: int = 0) -> RunRecord:
    """The persisted record of one run."""
    reason = result.verdict.reason if not result.verdict.passed else ""
    if result.error and result.error not in reason:
        reason = f"{result.error}; {reason}" if reason else result.error
    return RunRecord(
        task=result.task.id,
        category=result.task.category,
        style=result.style.value,
        catalog=result.catalog,
        requests=metered.total.requests,
        input_cached=metered.total.input_cached,
        input_uncached=metered.total.input_uncached,
        output=metered.total.output,
        total=metered.total.total,
        first_request_input=metered.first_request_input,
        passed=result.verdict.passed and not result.error and not result.not_runnable,
        reason=result.not_runnable or reason,
        repetition=repetition,
        state=NOT_RUNNABLE if result.not_runnable else RAN,
        input_written=metered.total.input_written,
    )


def _failed(task: Task, style: Style, catalog: int, repetition: int, reason: str) -> RunRecord:
    # Nothing was metered: the counts are unknown, not zero.
    return RunRecord(
        task=task.id,
        category=task.category,
        style=style.value,
        catalog=catalog,
        requests=0,
        input_cached=None,
        input_uncached=None,
        output=None,
        total=None,
        first_request_input=None,
        passed=False,
        reason=reason,
        repetition=repetition,
    )


__all__ = [
    "DEFAULT_CATALOGS",
    "WARMUP_FAMILIES",
    "AfterRun",
    "ModelFactory",
    "Progress",
    "UnknownTask",
    "default_jobs",
    "record_of",
    "run_count",
    "run_matrix",
    "select_tasks",
]
