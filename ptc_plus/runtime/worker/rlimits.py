"""Resource limits the child sets on itself right after ``boot``, before any program code runs.

Setting them here rather than in a ``preexec_fn`` keeps spawning on the fast
``vfork`` path and lets a warm spare start before the run's limits are known.
Soft and hard limits are both lowered, so the program cannot raise them back.
"""

from __future__ import annotations

import resource
from typing import Any

_RESOURCES = (
    ("memory_bytes", resource.RLIMIT_AS),
    ("cpu_seconds", resource.RLIMIT_CPU),
    ("open_files", resource.RLIMIT_NOFILE),
    ("max_processes", resource.RLIMIT_NPROC),
    ("max_file_bytes", resource.RLIMIT_FSIZE),
)


def apply(limits: dict[str, Any]) -> None:
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    for key, which in _RESOURCES:
        value = limits.get(key)
        if value is None:
            continue
        _soft, hard = resource.getrlimit(which)
        if hard != resource.RLIM_INFINITY:
            value = min(int(value), hard)
        resource.setrlimit(which, (int(value), int(value)))
