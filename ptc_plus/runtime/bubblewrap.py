"""The bubblewrap executor (ADR 0013, 0049, 0127): namespaces, seccomp and an idmapped workspace on the host kernel.

The confinement itself is :mod:`ptc_plus.runtime.sandbox` (the ``bwrap``
command line) and ``worker/confine.py`` (what the child does to itself before
``ready``); this module is its face behind the executor seam. The control
channel is the spawn's pipe pair, inherited through ``bwrap``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import attrs

from ptc_plus.runtime import sandbox
from ptc_plus.runtime.confinement import Availability, ProcessCap
from ptc_plus.runtime.process import RUNTIME_DIR, Enclosure, SpawnSpec, scrubbed_environment
from ptc_plus.runtime.run_limits import ExecutorName, RunLimits


@attrs.frozen
class Bubblewrap:
    name: ExecutorName = ExecutorName.BUBBLEWRAP
    process_cap: ProcessCap = ProcessCap.CGROUP

    async def probe(self, limits: RunLimits) -> Availability:
        found = await sandbox.probe(limits.bwrap_path, limits.python)
        return Availability(available=found.available, detail=found.detail)

    def known_available(self, limits: RunLimits) -> bool:
        return sandbox.known_available(limits.bwrap_path, limits.python)

    def spec(self, command: list[str], limits: RunLimits, workspace: Path, protected: Sequence[Path]) -> SpawnSpec:
        argv = sandbox.confine(command, limits, workspace, RUNTIME_DIR, protected)
        env = scrubbed_environment(workspace, limits.debug_run)
        return SpawnSpec(argv=tuple(argv), cwd=str(workspace), env=env)

    def enclosure(self, limits: RunLimits) -> Enclosure:
        return Enclosure(memory_bytes=limits.group_memory_bytes, max_processes=limits.max_processes)


BUBBLEWRAP = Bubblewrap()
