"""Getting a ready child for a run: sandbox check, spawn specification, warm spare.

A confined policy on a machine where the configured executor (ADR 0127)
does not work raises :class:`SandboxUnavailableError` before anything is
spawned; the run turns it into outcome ``sandbox-unavailable``. There is no
fallback to another executor.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

from ptc_plus.runtime.executor import Executor, ProcessCap, executor_for
from ptc_plus.runtime.process import (
    ConfinementFailed,
    Enclosure,
    SpawnSpec,
    WorkerProcess,
    scrubbed_environment,
    spawn,
    worker_command,
)
from ptc_plus.runtime.run_limits import RunLimits
from ptc_plus.runtime.spare import SparePool


class SandboxUnavailableError(Exception):
    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


class Launcher:
    def __init__(self, limits: RunLimits) -> None:
        self.limits = limits
        self._spares = SparePool()

    @property
    def executor(self) -> Executor | None:
        """What confines the children (``None``: ``danger-full-access`` runs them directly)."""
        return executor_for(self.limits) if self.limits.policy.confined else None

    @property
    def process_cap(self) -> ProcessCap:
        """Who caps a run's processes (the executor's say; the cgroup for unconfined children)."""
        executor = self.executor
        return ProcessCap.CGROUP if executor is None else executor.process_cap

    def spec_for(self, workspace: Path, protected: Sequence[Path] = ()) -> SpawnSpec:
        command = worker_command(self.limits.python)
        executor = self.executor
        if executor is not None:
            return executor.spec(command, self.limits, workspace, protected)
        env = scrubbed_environment(workspace, self.limits.debug_run)
        return SpawnSpec(argv=tuple(command), cwd=str(workspace), env=env)

    @property
    def enclosure(self) -> Enclosure | None:
        """The run cgroup each child gets (ADR 0043), unless ``limits.cgroup`` is off."""
        if not self.limits.cgroup:
            return None
        executor = self.executor
        if executor is not None:
            return executor.enclosure(self.limits)
        return Enclosure(memory_bytes=self.limits.group_memory_bytes, max_processes=self.limits.max_processes)

    async def acquire(self, workspace: Path, protected: Sequence[Path] = ()) -> WorkerProcess:
        """A ready child for a run in ``workspace`` (absolute, existing), ``protected`` bound read-only."""
        executor = self.executor
        if executor is not None:
            availability = await executor.probe(self.limits)
            if not availability.available:
                raise SandboxUnavailableError(availability.detail)
        spec = self.spec_for(workspace, protected)
        worker = await self._spares.take(spec) if self.limits.warm_spare else None
        if worker is None:
            try:
                worker = await spawn(spec, self.limits.max_message_bytes, self.enclosure)
            except ConfinementFailed as failure:
                # The probe passed, but this workspace cannot be confined (e.g. its filesystem refuses idmapping).
                raise SandboxUnavailableError(failure.detail) from None
        return worker

    def prepare_spare(self, workspace: Path, protected: Sequence[Path] = ()) -> None:
        """Start the next run's child now (no-op unless ``warm_spare``)."""
        if not self.limits.warm_spare:
            return
        executor = self.executor
        if executor is not None and not executor.known_available(self.limits):
            return  # the next run reports sandbox-unavailable (or probes first); no spare to waste
        self._spares.prepare(self.spec_for(workspace, protected), self.limits.max_message_bytes, self.enclosure)

    @property
    def spare(self) -> asyncio.Task[WorkerProcess] | None:
        """The warm spare's start task, if one exists (for tests and benchmarks)."""
        return self._spares.pending

    def kill_spare(self) -> None:
        self._spares.kill_now()

    async def aclose(self) -> None:
        await self._spares.discard()
