"""Keeping the program's descendants findable: the child becomes a subreaper (ADR 0044).

A process the program starts in a new session (``setsid``) leaves the
child's process group, so the host's ``killpg`` misses it. As a *child
subreaper*, this process inherits every orphaned descendant instead of
``init``, so while it lives all of them are in its process tree, where the
host finds and kills them at settlement. Linux only; elsewhere a no-op.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys

PR_SET_CHILD_SUBREAPER = 36


def become_subreaper() -> bool:
    """Mark this process a child subreaper; ``True`` when the kernel accepted it."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        # The interpreter's own symbols include libc's prctl; find_library would spawn ldconfig.
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def threads() -> set[str]:
    """Ids of this process's threads, Python's or not (empty where ``/proc`` is missing)."""
    try:
        return set(os.listdir("/proc/self/task"))
    except OSError:
        return set()


def children() -> set[int]:
    """This process's children, zombies included (from ``/proc``)."""
    found: set[int] = set()
    for task in threads():
        with contextlib.suppress(OSError), open(f"/proc/self/task/{task}/children", "rb") as handle:
            found.update(int(pid) for pid in handle.read().split())
    return found


def kill_children() -> None:
    """SIGKILL this process's children until none is left (each pass re-reads ``/proc``)."""
    for _ in range(64):
        found = children()
        if not found:
            return
        for pid in found:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        # Reap them, so that a dead child no longer counts as found.
        for pid in found:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)
