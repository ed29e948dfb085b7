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

from collections.abc import Mapping

from ptc_plus.runtime.bubblewrap import BUBBLEWRAP
from ptc_plus.runtime.confinement import Availability, Executor, ProcessCap
from ptc_plus.runtime.gvisor import GVISOR
from ptc_plus.runtime.run_limits import ExecutorName, RunLimits

__all__ = ["EXECUTORS", "Availability", "Executor", "ExecutorName", "ProcessCap", "availability", "executor_for"]


def _registry() -> Mapping[ExecutorName, Executor]:
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
