"""Between cells nothing of the program runs (ADR 0085): the kernel is frozen, the rest killed.

When a cell settles and its worker is to be kept, :func:`freeze` makes it inert before the cell is
reported settled:

1. The kernel's interpreter gets ``SIGSTOP`` (it cannot be caught, blocked or ignored), and the host
   waits until every one of its threads is stopped. A thread, an event-loop task or a patched
   helper the cell left behind can then not run until the next cell resumes the kernel
   (:func:`thaw`).
2. Every other process of the sandbox is killed: the members of the run's cgroup when the runtime
   has one, and every descendant of the worker in the process tree, but the chain from the worker
   (the sandbox) down to the interpreter. Pass after pass until a pass finds none: a process
   forking during a pass is found by the next; the interpreter itself, stopped, forks nothing.
3. A kernel with more threads than its own (:data:`KERNEL_THREADS`) is not kept: such a cell's
   state keeps changing on its own, so it cannot be matched to a journal node. The caller stops it
   and marks the cell volatile; the next cell recovers by replay.

Reading ``/proc`` is Linux only; elsewhere there is nothing to find and a kernel is kept unfrozen.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal

from ptc_plus.runtime.cgroup import RunCgroup
from ptc_plus.runtime.descendants import descendants, kill_until_none
from ptc_plus.runtime.process import WorkerProcess

KERNEL_THREADS = 2
"""Threads of an idle kernel's interpreter: the main thread and the output ledger's flusher
(``worker/ledger.py``). Anything beyond them was started by a cell."""

_STOPPED = (b"T", b"t")
_GONE = (b"Z", b"X")


def _state(path: str) -> bytes | None:
    try:
        with open(path, "rb") as handle:
            return handle.read().rsplit(b")", 1)[1].split()[0]
    except (OSError, IndexError):
        return None


def _parent(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return int(handle.read().rsplit(b")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return None


def threads(pid: int) -> list[str]:
    """Thread ids of ``pid`` (empty once it is gone, or without ``/proc``)."""
    try:
        return os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []


def stopped(pid: int) -> bool:
    """Whether every thread of ``pid`` is stopped (a process that is gone counts as stopped)."""
    return all(_state(f"/proc/{pid}/task/{tid}/stat") in (*_STOPPED, *_GONE, None) for tid in threads(pid))


def chain(top: int, bottom: int) -> set[int]:
    """The processes from ``top`` down to ``bottom`` (both included), read upwards from ``bottom``."""
    found = {bottom}
    pid: int | None = bottom
    while pid is not None and pid != top and pid > 1:
        pid = _parent(pid)
        if pid is not None:
            found.add(pid)
    return found


def kill_all_but(keep: set[int], top: int, cgroup: RunCgroup | None) -> int:
    """SIGKILL every process of the run (cgroup members, descendants of ``top``) not in ``keep`` until a
    pass finds none; how many were signalled."""

    def found() -> set[int]:
        members = cgroup.members() if cgroup is not None else set()
        return (members | descendants(top)) - keep

    return kill_until_none(found)


async def freeze(worker: WorkerProcess, interpreter: int | None, grace: float) -> tuple[str, str] | None:
    """Stop the kernel's ``interpreter`` and kill every other process of ``worker``'s sandbox.

    :returns: ``None`` when the kernel may be kept (frozen: :func:`thaw` before its next cell), else why
        not as a volatile reason: ``threads`` (the cell left some running), or ``unconfirmed`` (its
        interpreter was not found, or did not stop within ``grace``).
    """
    if interpreter is None:
        kill_all_but({worker.pid}, worker.pid, worker.cgroup)
        return ("unconfirmed", "the kernel's interpreter was not found")
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(interpreter, signal.SIGSTOP)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + grace
    delay = 0.0005
    while not stopped(interpreter):
        if loop.time() >= deadline:
            kill_all_but({worker.pid}, worker.pid, worker.cgroup)
            return ("unconfirmed", "the kernel did not stop between cells")
        await asyncio.sleep(delay)
        delay = min(delay * 2, 0.02)
    kill_all_but(chain(worker.pid, interpreter), worker.pid, worker.cgroup)
    count = len(threads(interpreter))
    if count > KERNEL_THREADS:
        return ("threads", f"{count - KERNEL_THREADS} thread(s) of the cell were still running when it ended")
    return None


def thaw(interpreter: int | None) -> None:
    """Let a frozen kernel run again (right before its next cell)."""
    if interpreter is not None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(interpreter, signal.SIGCONT)
