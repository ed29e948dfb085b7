"""Live kernels: at most one per session, stopped when idle too long or when too many are live.

A :class:`Kernel` is a worker process holding a session's names, with the journal node its
state corresponds to. The pool hands a session's kernel out for one cell at a time (a
session's cells run one after another: :meth:`KernelPool.session_lock`), keeps the most
recently used ``max_kernels`` and stops one idle for ``idle_s``. Stopping a kernel loses
nothing: the next cell rebuilds it from the journal (ADR 0081).
"""

from __future__ import annotations

import asyncio
import collections
from pathlib import Path

import attrs

from ptc_plus.runtime.process import WorkerProcess


@attrs.define(kw_only=True)
class Kernel:
    worker: WorkerProcess
    head: int
    """The journal node whose state the worker holds (0: an empty kernel)."""
    next_id: int
    """The first request id of the next cell (ids continue across a kernel's cells)."""
    bindings: str = ""
    """Fingerprint of the user bindings loaded into it."""
    records: tuple[object, ...] = ()
    """The journal's items as of its last cell (read and appended), reused while ``marker`` matches."""
    marker: object = None
    """The store's :meth:`~.store.JournalStore.marker` right after its last cell's records."""
    workspace: Path | None = None
    """The workspace its sandbox binds: a kernel serves this one workspace only (ADR 0085)."""
    protected: tuple[Path, ...] = ()
    """The protected paths its sandbox binds read-only; a request protecting others needs a new kernel."""
    interpreter: int | None = None
    """The kernel's interpreter process (below the sandbox's): frozen between cells (:mod:`.quiesce`)."""

    def serves(self, workspace: Path, protected: tuple[Path, ...]) -> bool:
        """Whether its sandbox is the one a request in ``workspace`` protecting ``protected`` gets."""
        return self.workspace == workspace and self.protected == protected


class KernelPool:
    def __init__(self, max_kernels: int, idle_s: float, grace_s: float) -> None:
        self._max = max_kernels
        self._idle_s = idle_s
        self._grace_s = grace_s
        self._idle: collections.OrderedDict[str, tuple[Kernel, asyncio.TimerHandle]] = collections.OrderedDict()
        self._locks: dict[str, asyncio.Lock] = {}
        self._stopping: set[asyncio.Task[None]] = set()

    def session_lock(self, session: str) -> asyncio.Lock:
        """Held around a whole cell: cells of one session never overlap."""
        return self._locks.setdefault(session, asyncio.Lock())

    def take(self, session: str) -> Kernel | None:
        """The session's idle kernel, now out of the pool (``None``: there is none, or it died)."""
        entry = self._idle.pop(session, None)
        if entry is None:
            return None
        kernel, timer = entry
        timer.cancel()
        if not kernel.worker.alive:
            self._stop(kernel)
            return None
        return kernel

    def put(self, session: str, kernel: Kernel) -> None:
        """Keep ``kernel`` for the session's next cell; the least recently used beyond the cap are stopped."""
        timer = asyncio.get_running_loop().call_later(self._idle_s, self._expire, session, kernel)
        self._idle[session] = (kernel, timer)
        self._idle.move_to_end(session)
        while len(self._idle) > self._max:
            _session, (oldest, oldest_timer) = self._idle.popitem(last=False)
            oldest_timer.cancel()
            self._stop(oldest)

    def pid(self, session: str) -> int | None:
        """The process id of the session's idle kernel (``None``: none is live)."""
        entry = self._idle.get(session)
        return entry[0].worker.pid if entry is not None else None

    @property
    def live(self) -> int:
        """Idle kernels held now (for tests and ``list``)."""
        return len(self._idle)

    def _expire(self, session: str, kernel: Kernel) -> None:
        entry = self._idle.get(session)
        if entry is not None and entry[0] is kernel:
            del self._idle[session]
            self._stop(kernel)

    def _stop(self, kernel: Kernel) -> None:
        task = asyncio.ensure_future(kernel.worker.stop(self._grace_s))
        self._stopping.add(task)
        task.add_done_callback(self._stopping.discard)

    async def stop(self, worker: WorkerProcess) -> None:
        """Stop a kernel's worker that is not (or no longer) in the pool."""
        await worker.stop(self._grace_s)

    def kill_now(self) -> None:
        """Synchronous shutdown: kill every idle kernel's process group."""
        for kernel, timer in self._idle.values():
            timer.cancel()
            kernel.worker.kill_group()
        self._idle.clear()

    async def aclose(self) -> None:
        """Stop every idle kernel and wait for them."""
        entries = list(self._idle.values())
        self._idle.clear()
        for _kernel, timer in entries:
            timer.cancel()
        await asyncio.gather(*(kernel.worker.stop(self._grace_s) for kernel, _timer in entries), *self._stopping)
