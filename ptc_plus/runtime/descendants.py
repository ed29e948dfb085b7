"""Finding and killing every descendant of a run's child, inside or outside its process group (ADR 0044).

The child is a subreaper (``worker/reaper.py``), so while it lives every
process the program started — including those that called ``setsid`` to
leave the group, and orphans of them — is somewhere in its process tree.
:func:`kill_descendants` walks that tree through ``/proc`` and SIGKILLs it,
pass after pass, until a pass finds nothing (a process forking during a
pass leaves its new child to the subreaper, where the next pass finds it).
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Callable

MAX_PASSES = 64


def children(pid: int) -> set[int]:
    """Direct children of ``pid`` (Linux ``/proc``; empty elsewhere or once it is gone)."""
    found: set[int] = set()
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children", "rb") as handle:
                found.update(int(child) for child in handle.read().split())
        except OSError:
            if not os.path.exists(f"/proc/{pid}/task/{task}/children"):
                return _children_by_scan(pid)
    return found


def _children_by_scan(pid: int) -> set[int]:
    """The slow path for kernels without ``/proc/<pid>/task/<tid>/children``."""
    found: set[int] = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as handle:
                    if int(handle.read().rsplit(b")", 1)[1].split()[1]) == pid:
                        found.add(int(entry))
            except (OSError, IndexError, ValueError):
                continue
    return found


def descendants(pid: int) -> set[int]:
    """Every process below ``pid`` in the process tree right now."""
    seen: set[int] = set()
    frontier = children(pid)
    while frontier:
        seen |= frontier
        frontier = set().union(*(children(child) for child in frontier)) - seen
    return seen


def kill_descendants(pid: int) -> int:
    """SIGKILL every descendant of ``pid`` (not ``pid`` itself) until none is left; how many were signalled."""
    return kill_until_none(lambda: descendants(pid))


def kill_until_none(find: Callable[[], set[int]]) -> int:
    """SIGKILL every live process ``find`` names, pass after pass until a pass finds none (a process forking
    during a pass is found by the next; at most :data:`MAX_PASSES`); how many were signalled."""
    killed = 0
    for _ in range(MAX_PASSES):
        found = {pid for pid in find() if not _zombie(pid)}
        if not found:
            break
        for pid in found:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
                killed += 1
    return killed


def _zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return handle.read().rsplit(b")", 1)[1].split()[0] in (b"Z", b"X")
    except (OSError, IndexError):
        return True
