"""The executor seam: what starts the confined worker and keeps the policy's promises (ADR 0127).

An :class:`Executor` turns the worker's command line into a :class:`SpawnSpec`
that, when started, runs the worker confined by ``limits.policy`` (read-only
or workspace-write view of the workspace, no network unless allowed, never
root), hands it the control channel as a byte stream (a pipe pair, or a Unix
socket the worker connects to) and leaves nothing behind once the launcher
has stopped it (every process, and the temporary files of the spawn). Which
implementation runs is ``limits.executor``, looked up in :data:`EXECUTORS`, a
plain table inside the runtime (no plugin hook: an executor holds the
runtime's security promises, so it is not something a host may swap in).

``danger-full-access`` is not an executor's business: the launcher runs the
worker directly, whatever executor is configured. Everything outside the
runtime asks :func:`availability` ("can programs run confined here, and if
not why") and never names an implementation.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Protocol

import attrs

from ptc_plus.runtime.process import Enclosure, SpawnSpec
from ptc_plus.runtime.run_limits import ExecutorName, RunLimits

__all__ = ["EXECUTORS", "Availability", "Executor", "ExecutorName", "availability", "executor_for"]


@attrs.frozen(kw_only=True)
class Availability:
    """Whether an executor can confine programs here; ``detail`` says why not (shown to the user)."""

    available: bool
    detail: str = ""


class ProcessCap(enum.Enum):
    """Who stops a run's process count at ``limits.max_processes``."""

    CGROUP = "cgroup"
    """The host's run cgroup (``pids.max``), with ``RLIMIT_NPROC`` only where no cgroup could be made."""
    CHILD = "child"
    """``RLIMIT_NPROC`` inside the sandbox, always: the host's cgroup holds the executor's own threads too."""


class Executor(Protocol):
    """One way of confining the worker. Implementations are stateless apart from caches of their probe."""

    @property
    def name(self) -> ExecutorName: ...

    @property
    def process_cap(self) -> ProcessCap:
        """Who caps a run's process count under this executor."""
        ...

    async def probe(self, limits: RunLimits) -> Availability:
        """Whether this executor can confine ``limits.python`` here; runs the whole confinement once (cached)."""
        ...

    def known_available(self, limits: RunLimits) -> bool:
        """Whether an earlier :meth:`probe` for ``limits`` succeeded (never probes itself)."""
        ...

    def spec(self, command: list[str], limits: RunLimits, workspace: Path, protected: Sequence[Path]) -> SpawnSpec:
        """The spawn specification running ``command`` confined (``limits.policy`` is confined).

        ``command`` holds ``{read_fd}``/``{write_fd}`` for the channel ends and
        the runtime directory as an argument; ``protected`` are existing paths
        inside ``workspace`` bound read-only (:mod:`ptc_plus.runtime.protected`).
        Equal arguments give equal specs (the warm spare relies on it).
        """
        ...

    def enclosure(self, limits: RunLimits) -> Enclosure:
        """The host run cgroup's limits for one child of this executor (ADR 0043)."""
        ...


def _registry() -> Mapping[ExecutorName, Executor]:
    from ptc_plus.runtime.bubblewrap import BUBBLEWRAP
    from ptc_plus.runtime.gvisor import GVISOR

    executors: tuple[Executor, ...] = (BUBBLEWRAP, GVISOR)
    return {executor.name: executor for executor in executors}


EXECUTORS: Mapping[ExecutorName, Executor] = _registry()
"""Every executor by name: the runtime's own strategy table (ADR 0127)."""


def executor_for(limits: RunLimits) -> Executor:
    return EXECUTORS[limits.executor]


async def availability(limits: RunLimits) -> Availability:
    """Whether programs can run under ``limits`` here: always for an unconfined policy, else the configured
    executor's probe (never another executor's: there is no silent fallback)."""
    if not limits.policy.confined:
        return Availability(available=True)
    return await executor_for(limits).probe(limits)
