"""The executor seam's types (ADR 0127): the :class:`Executor` protocol and what it answers.

Kept apart from :mod:`ptc_plus.runtime.executor` (the table of implementations) so that the
implementations import these without importing the table that imports them.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

import attrs

from ptc_plus.runtime.process import Enclosure, SpawnSpec
from ptc_plus.runtime.run_limits import ExecutorName, RunLimits

__all__ = ["Availability", "Executor", "ProcessCap"]


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
