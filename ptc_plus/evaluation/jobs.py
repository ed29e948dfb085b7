"""Independent runs of the matrix side by side, one worker process each (``ptc-plus eval --jobs N``, ADR 0119).

A scripted run is a function of its task, style, catalog size and (for the mature styles) the warm-up's
statistics file: every count is memoized by content, the run directory is metered and recorded under a
stand-in path (:data:`~ptc_plus.evaluation.runner.PORTABLE_RUN`), and two clones under two ``TMPDIR``\\ s
write the same bytes (ADR 0106). So runs need not share a process or a directory, only an order for the
results, which the caller keeps.

Why processes and not tasks of one event loop: each run points ``HOME`` and the ``XDG_*`` variables at
its own user directories (:func:`~ptc_plus.evaluation.styles.isolated_environment`), and the environment
belongs to the process. Each worker loads the suite from its directory once, keeps one MCP bridge and one
:class:`~ptc_plus.evaluation.metering.Meter`, and works in a directory of its own under the matrix's.
Warm-ups run first (a mature run needs its store), then every run; each worker copies a warm-up's store to
the name the caller gave, so the statistics of one warm-up set never depend on which worker made them.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import gc
import multiprocessing
import os
import shutil
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

import attrs

from ptc_plus.errors import PtcError
from ptc_plus.evaluation.errors import CatalogTooSmall, DuplicateToolName
from ptc_plus.evaluation.mcp_bridge import McpBridge
from ptc_plus.evaluation.metering import Meter, o200k_counter
from ptc_plus.evaluation.styles import Parameters
from ptc_plus.evaluation.task import Suite, Task

T = TypeVar("T")


@attrs.frozen(kw_only=True)
class WorkerSetup:
    """What every worker builds its state from (picklable: paths, strings, numbers)."""

    suite_directory: Path
    workdir: Path
    """The matrix's directory; the worker works in ``workdir/job-<pid>``."""
    host_prompt: str
    parameters: Parameters
    context_tokens: int


@attrs.frozen(kw_only=True)
class RunSpec:
    """One run, named by ids (a :class:`Task` holds functions and is rebuilt in the worker from the suite)."""

    task: str
    style: str
    catalog: int
    repetition: int
    statistics: Path | None


@attrs.frozen(kw_only=True)
class WarmUpSpec:
    """One warm-up: the first task of its set names it (``suite.warmup_of``); its store is copied to ``keep``."""

    task: str
    catalog: int
    families: int
    keep: Path


@attrs.frozen(kw_only=True)
class Refused:
    """An engine refusal that must stop the matrix as it does in one process (re-raised by the caller)."""

    kind: str
    params: dict[str, Any]


_REFUSALS: dict[str, type[PtcError]] = {kind.__name__: kind for kind in (CatalogTooSmall, DuplicateToolName)}


@attrs.define
class _Worker:
    """A worker process's state, built once by the pool's initializer."""

    setup: WorkerSetup
    suite: Suite
    tasks: dict[str, Task]
    where: Path
    meter: Meter
    runner: asyncio.Runner
    bridge: McpBridge
    stop: asyncio.Event


_state: _Worker | None = None


def _start(setup: WorkerSetup) -> None:
    """Worker initializer: load the suite, start the bridge (kept by a task of the worker's loop, so it is
    entered and left in one task as the MCP SDK requires), make the meter."""
    global _state
    from ptc_plus.evaluation.loading import load_suite

    suite = load_suite(setup.suite_directory)
    where = setup.workdir / f"job-{os.getpid()}"
    where.mkdir(parents=True, exist_ok=True)
    meter = Meter(o200k_counter(), host_prompt=setup.host_prompt, run_root=where)
    runner = asyncio.Runner()
    started: list[Any] = []

    async def keep() -> None:
        stop = asyncio.Event()
        ready: asyncio.Future[McpBridge] = asyncio.get_running_loop().create_future()

        async def hold() -> None:
            async with McpBridge.time_server() as bridge:
                ready.set_result(bridge)
                await stop.wait()

        started.append(asyncio.ensure_future(hold()))
        started.append(await ready)
        started.append(stop)

    runner.run(keep())
    holder, bridge, stop = started
    tasks = {task.id: task for task in (*suite.tasks, *suite.warmup)}
    settle_heap()
    _state = _Worker(setup, suite, tasks, where, meter, runner, bridge, stop)

    def finish() -> None:
        async def close() -> None:
            stop.set()
            with contextlib.suppress(Exception):
                await holder

        runner.run(close())
        runner.close()
        shutil.rmtree(where, ignore_errors=True)

    atexit.register(finish)


def settle_heap() -> None:
    """Between runs: collect the last run's garbage, then freeze what survives (the suite, the tokenizer, the
    imports, the content-keyed caches) out of the collector's later scans.

    Measured (``benchmarks/eval_speed.py``): a PTC Plus run at 2,000 tools spent 0.6-0.75 of its 2.3 host
    CPU-s in the collector, scanning ~260,000 long-lived objects on every full collection its allocations
    triggered (the statistics fold, the catalog's 2,000 contracts); frozen, ~35,000 remain. Nothing a run
    computes depends on when the collector runs. A library must not change its host's collector: the plugin
    never calls this; the evaluation owns its processes.
    """
    gc.collect()
    gc.freeze()


def worker() -> _Worker:
    """This worker process's state (the suite, its tasks by id, its directory, meter, loop and bridge)."""
    assert _state is not None, "not a worker process"
    return _state


def refused(error: CatalogTooSmall | DuplicateToolName) -> Refused:
    """``error`` as a picklable value (a :class:`~ptc_plus.errors.PtcError` takes its parameters by name, which
    pickling an exception does not keep)."""
    return Refused(kind=type(error).__name__, params=error.params)


def unrefused(value: T | Refused) -> T:
    """``value``, or the refusal raised again as the error it was in the worker."""
    if isinstance(value, Refused):
        raise _REFUSALS[value.kind](**value.params)
    return value


class Pool:
    """``jobs`` worker processes over one :class:`WorkerSetup` (spawned: a forked copy of an event loop's
    process with its threads is not safe)."""

    def __init__(self, setup: WorkerSetup, jobs: int) -> None:
        self._executor = ProcessPoolExecutor(
            max_workers=jobs, mp_context=multiprocessing.get_context("spawn"), initializer=_start, initargs=(setup,)
        )

    def submit(self, function: Callable[[T], Any], item: T) -> Future[Any]:
        """``function(item)`` in a worker (queued in submission order)."""
        return self._executor.submit(function, item)

    def close(self) -> None:
        self._executor.shutdown(wait=True, cancel_futures=True)


def default_jobs() -> int:
    """The cores this process may use (``os.sched_getaffinity``), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


__all__ = [
    "Pool",
    "Refused",
    "RunSpec",
    "WarmUpSpec",
    "WorkerSetup",
    "default_jobs",
    "refused",
    "settle_heap",
    "unrefused",
    "worker",
]
