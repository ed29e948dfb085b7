"""A per-run cgroup: one memory limit and one process limit over *all* the program's processes (ADR 0043).

``RLIMIT_AS`` bounds each process, so forked children multiply it, and
``RLIMIT_NPROC`` counts every process of the user (and does not apply to
root at all). Where the machine lets the host create cgroups, each run gets
its own, holding every process of the child: the memory controller caps
their sum (``memory_bytes`` plus the private ``/tmp``, whose pages are
charged to it) and the pids controller caps their number
(``max_processes``). The child is moved in before ``boot``, so every
process the program starts is born inside. cgroup v1 (``memory`` and
``pids`` hierarchies) and v2 (when the host's own cgroup delegates both
controllers) are supported; otherwise :meth:`RunCgroup.create` returns
``None`` and only the rlimits apply. The cgroup also lists every process of
the run for the final sweep, whatever session or parent it has.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import signal
from pathlib import Path

from ptc_plus.runtime.descendants import descendants

ROOT = Path("/sys/fs/cgroup")
_PREFIX = "ptc-plus-"
_names = itertools.count(1)
_swept = False


def _own_paths() -> dict[str, str]:
    """``controller -> path`` of this process's cgroups (``""`` for the v2 hierarchy)."""
    paths: dict[str, str] = {}
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return paths
    for line in lines:
        _id, controllers, path = line.split(":", 2)
        for controller in controllers.split(",") if controllers else [""]:
            paths[controller] = path
    return paths


def _v1_dirs() -> dict[str, Path] | None:
    own = _own_paths()
    dirs: dict[str, Path] = {}
    for controller in ("memory", "pids"):
        if controller not in own or not (ROOT / controller).is_dir():
            return None
        dirs[controller] = ROOT / controller / own[controller].lstrip("/")
    return dirs


def _v2_dir() -> Path | None:
    own = _own_paths().get("")
    if own is None:
        return None
    parent = ROOT / own.lstrip("/")
    try:
        enabled = (parent / "cgroup.subtree_control").read_text().split()
    except OSError:
        return None
    return parent if {"memory", "pids"} <= set(enabled) else None


class RunCgroup:
    """The cgroup directories of one run (one per v1 hierarchy, or one v2 directory)."""

    def __init__(self, dirs: list[Path]) -> None:
        self.dirs = dirs

    @classmethod
    def create(cls, memory_bytes: int, max_processes: int) -> RunCgroup | None:
        """A new cgroup with these limits, or ``None`` when this machine does not let us make one.

        The first call in a process also removes run cgroups that a host killed
        before it could clean up left behind (:func:`sweep_abandoned`).
        """
        global _swept
        name = f"{_PREFIX}{os.getpid()}-{next(_names)}"
        v1 = _v1_dirs()
        parent = _v2_dir() if v1 is None else None
        if not _swept:
            _swept = True
            sweep_abandoned([*v1.values()] if v1 is not None else [parent] if parent is not None else [])
        if v1 is not None:
            settings = [
                (v1["memory"] / name, "memory.limit_in_bytes", memory_bytes),
                (v1["pids"] / name, "pids.max", max_processes),
            ]
        else:
            if parent is None:
                return None
            settings = [(parent / name, "memory.max", memory_bytes), (parent / name, "pids.max", max_processes)]
        made: list[Path] = []
        try:
            for directory, knob, value in settings:
                if directory not in made:
                    directory.mkdir()
                    made.append(directory)
                (directory / knob).write_text(str(value))
        except OSError:
            RunCgroup(made).remove()
            return None
        return cls(made)

    def adopt(self, pids: set[int]) -> bool:
        """Move ``pids`` in (before any of them runs program code); ``False`` if that failed."""
        try:
            for directory in self.dirs:
                for pid in sorted(pids):
                    with contextlib.suppress(ProcessLookupError):
                        (directory / "cgroup.procs").write_text(str(pid))
        except OSError:
            return False
        return True

    def members(self) -> set[int]:
        found: set[int] = set()
        for directory in self.dirs:
            with contextlib.suppress(OSError):
                found.update(int(pid) for pid in (directory / "cgroup.procs").read_text().split())
        return found

    def kill(self) -> int:
        """SIGKILL every process still inside; how many there were."""
        members = self.members()
        for pid in members:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        return len(members)

    def remove(self) -> bool:
        """Remove the directories (only possible once no process is left); ``True`` when all are gone."""
        gone = True
        for directory in self.dirs:
            try:
                directory.rmdir()
            except FileNotFoundError:
                pass
            except OSError:
                gone = False
        return gone


def enclose(pid: int, memory_bytes: int, max_processes: int) -> RunCgroup | None:
    """A new run cgroup holding ``pid`` and its descendants, or ``None`` (no cgroup can be made here).

    Moving a live process between cgroups waits for the kernel (milliseconds):
    the launcher does it for an idle child in a thread, before the run needs it.
    """
    cgroup = RunCgroup.create(memory_bytes, max_processes)
    if cgroup is not None and not cgroup.adopt({pid} | descendants(pid)):
        cgroup.kill()
        cgroup.remove()
        return None
    return cgroup


async def empty_and_remove(cgroup: RunCgroup, grace: float) -> None:
    """Kill whatever is left in ``cgroup`` and remove it (bounded by ``grace``; a leftover is kept)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + grace
    delay = 0.001
    while cgroup.kill() and loop.time() < deadline:
        await asyncio.sleep(delay)
        delay = min(delay * 2, 0.05)
    while not cgroup.remove() and loop.time() < deadline:
        await asyncio.sleep(delay)
        delay = min(delay * 2, 0.05)


def sweep_abandoned(parents: list[Path]) -> list[Path]:
    """Remove run cgroups under ``parents`` whose host process is gone (a killed ``ptc-plus exec``); the removed ones.

    A run cgroup is named ``ptc-plus-<host pid>-<n>``; one whose host pid no
    longer exists can only be a leftover. Anything still inside is killed
    first; a directory that cannot be removed is left for the next sweep.
    """
    removed: list[Path] = []
    for parent in parents:
        with contextlib.suppress(OSError):
            for directory in parent.iterdir():
                owner = directory.name.removeprefix(_PREFIX).split("-", 1)[0]
                if not directory.name.startswith(_PREFIX) or not owner.isdigit() or _alive(int(owner)):
                    continue
                leftover = RunCgroup([directory])
                leftover.kill()
                if leftover.remove():
                    removed.append(directory)
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
