"""The warm spare: one started, ``ready`` child kept for the next run (ADR 0010).

A spare belongs to one spawn specification and one event loop. A spawn is
never cancelled midway: a spare that is no longer wanted is stopped once it
has finished starting (``retire``), so nothing is left half set up.
"""

from __future__ import annotations

import asyncio
import logging

from ptc_plus.runtime.process import Enclosure, SpawnSpec, WorkerProcess, spawn

SPARE_STOP_GRACE_S = 0.5
_retiring: set[asyncio.Task[None]] = set()


def retire(task: asyncio.Task[WorkerProcess]) -> None:
    """Stop the child ``task`` produces, now or as soon as it has started."""

    def finished(done: asyncio.Task[WorkerProcess]) -> None:
        if done.cancelled() or done.exception() is not None:
            return
        worker = done.result()
        worker.kill_group()
        if not worker.loop.is_closed():
            stopping = worker.loop.create_task(worker.stop(SPARE_STOP_GRACE_S))
            _retiring.add(stopping)
            stopping.add_done_callback(_retiring.discard)

    if task.done():
        finished(task)
    else:
        task.add_done_callback(finished)


def _consume_error(task: asyncio.Task[WorkerProcess]) -> None:
    if not task.cancelled():
        task.exception()


class SparePool:
    """At most one spare child."""

    def __init__(self) -> None:
        self._spare: asyncio.Task[WorkerProcess] | None = None
        self._spec: SpawnSpec | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def pending(self) -> asyncio.Task[WorkerProcess] | None:
        """The spare's start task, if there is a spare."""
        return self._spare

    async def take(self, spec: SpawnSpec) -> WorkerProcess | None:
        """The spare if it matches ``spec`` and this loop (awaited if still starting), else ``None``."""
        task, self._spare = self._spare, None
        if task is None:
            return None
        if self._spec != spec or self._loop is not asyncio.get_running_loop():
            self._retire_elsewhere(task)
            return None
        try:
            worker = await asyncio.shield(task)
        except asyncio.CancelledError:
            retire(task)
            raise
        except Exception:  # the run starts its own child, and reports what goes wrong with it
            logging.getLogger(__name__).debug("the warm spare failed to start", exc_info=True)
            return None
        if not worker.alive:
            await worker.stop(SPARE_STOP_GRACE_S)
            return None
        return worker

    def prepare(self, spec: SpawnSpec, max_message_bytes: int, enclosure: Enclosure | None = None) -> None:
        """Start a spare for ``spec`` in the background unless one exists."""
        if self._spare is not None:
            return
        self._spec, self._loop = spec, asyncio.get_running_loop()
        self._spare = asyncio.create_task(spawn(spec, max_message_bytes, enclosure))
        # A spare that fails to start is simply not used; do not let its error go "never retrieved".
        self._spare.add_done_callback(_consume_error)

    def kill_now(self) -> None:
        """Synchronous discard (for synchronous shutdown hooks)."""
        task, self._spare = self._spare, None
        if task is not None:
            self._retire_elsewhere(task)

    async def discard(self) -> None:
        """Stop the spare and wait until it is gone."""
        task, self._spare = self._spare, None
        if task is None:
            return
        if self._loop is not asyncio.get_running_loop():
            self._retire_elsewhere(task)
            return
        try:
            worker = await asyncio.shield(task)
        except asyncio.CancelledError:
            retire(task)
            raise
        except Exception:  # nothing to stop
            logging.getLogger(__name__).debug("a retired spare had failed to start", exc_info=True)
            return
        await worker.stop(SPARE_STOP_GRACE_S)

    def _retire_elsewhere(self, task: asyncio.Task[WorkerProcess]) -> None:
        if self._loop is not None and self._loop.is_closed():
            # The owning loop is gone; its transports cannot be touched. Kill the group by pid.
            if task.done() and not task.cancelled() and task.exception() is None:
                task.result().kill_group()
            return
        retire(task)
