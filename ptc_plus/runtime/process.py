"""The child process of a run: spawn, readiness, termination, and the warm spare (ADR 0012).

Each run gets a fresh ``python -I -S -X utf8`` process in its own session
(so its process group holds every descendant that does not leave it on
purpose), with a scrubbed environment, an explicit absolute cwd, stdin
closed, stdout/stderr piped to the host ledger and a private control pipe
pair. The child lowers its own resource limits after ``boot`` (see
``worker/rlimits.py``). :class:`SparePool` keeps one started, ``ready`` child
per spawn specification so the next run skips interpreter start-up.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import signal
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path

import attrs

from ptc_plus.runtime import socket_channel
from ptc_plus.runtime.cgroup import RunCgroup, empty_and_remove, enclose
from ptc_plus.runtime.channel import ControlChannel
from ptc_plus.runtime.descendants import kill_descendants
from ptc_plus.runtime.protocol import ChildFrame, ProtocolViolation, Ready
from ptc_plus.runtime.worker.main import CONFINEMENT_FAILED_EXIT

RUNTIME_DIR = Path(__file__).resolve().parent
STARTER = "import sys;sys.path.append(sys.argv[1]);from worker.main import main;sys.path.pop();main(sys.argv[2:])"

OutputSink = Callable[[str, bytes], None]
CONFINEMENT_REPORT_WAIT_S = 1.0


@attrs.frozen(kw_only=True)
class Enclosure:
    """The run cgroup a new child is moved into once ready (ADR 0043)."""

    memory_bytes: int
    max_processes: int


@attrs.frozen(kw_only=True)
class SpawnSpec:
    """Everything that determines a child before ``boot``; equal specs give interchangeable children."""

    argv: tuple[str, ...]
    cwd: str
    env: tuple[tuple[str, str], ...]
    bundle: str | None = None
    """An OCI bundle's ``config.json`` (ADR 0127): the child is started from a fresh scratch directory holding it,
    and its channel is a Unix socket there, not inherited pipes (:mod:`ptc_plus.runtime.socket_channel`)."""


def scrubbed_environment(workspace: Path, debug_run: bool) -> tuple[tuple[str, str], ...]:
    """The whole environment a program sees: nothing of the host's leaks through."""
    return (
        ("HOME", str(workspace)),
        ("LANG", "C.UTF-8"),
        ("PATH", "/usr/local/bin:/usr/bin:/bin"),
        ("PTC_DEBUG_RUN", "true" if debug_run else "false"),
        ("TMPDIR", "/tmp"),
    )


def worker_command(python: str) -> list[str]:
    """The child's command line; ``{read_fd}``/``{write_fd}`` are filled in at spawn time."""
    return [python, "-I", "-S", "-X", "utf8", "-c", STARTER, str(RUNTIME_DIR), "{read_fd}", "{write_fd}"]


class _OutputPipe(asyncio.Protocol):
    def __init__(self, worker: WorkerProcess, stream: str) -> None:
        self._worker = worker
        self._stream = stream

    def data_received(self, data: bytes) -> None:
        self._worker._output(self._stream, data)

    def eof_received(self) -> bool | None:
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        self._worker._pipe_closed(self._stream)


class WorkerProcess:
    """A started child: the process, its stdout/stderr pipes and its control channel.

    Spawned with :class:`subprocess.Popen` (not asyncio's subprocess API) and
    watched through a pidfd: asyncio's cancellation path kills only the pid it
    started, which under bubblewrap leaves the sandbox holding the pipes, and
    then waits for those pipes forever. Here every kill is a ``killpg``.
    """

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc
        self.pid: int = proc.pid
        self.loop = asyncio.get_running_loop()
        self.exited: asyncio.Future[None] = self.loop.create_future()
        self.drained: asyncio.Future[None] = self.loop.create_future()
        self._channel: ControlChannel | None = None
        self._open = {"fd1", "fd2"}
        self._early: list[tuple[str, bytes]] = []
        self._sink: OutputSink | None = None
        self._transports: list[asyncio.BaseTransport] = []
        self._pidfd: int | None = None
        self.cgroup: RunCgroup | None = None
        """The child's run cgroup, if one could be made (removed by :meth:`stop`)."""
        self.scratch: str | None = None
        """A bundled child's scratch directory (removed once the child is released)."""

    @classmethod
    async def start(cls, spec: SpawnSpec, max_message_bytes: int) -> WorkerProcess:
        """Spawn ``spec`` (``{read_fd}``/``{write_fd}`` in its argv become the child's channel ends)."""
        if spec.bundle is not None:
            return await cls._start_bundled(spec, max_message_bytes)
        child_read, host_write = os.pipe()
        host_read, child_write = os.pipe()
        argv = [arg.replace("{read_fd}", str(child_read)).replace("{write_fd}", str(child_write)) for arg in spec.argv]
        try:
            proc = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=spec.cwd,
                env=dict(spec.env),
                pass_fds=(child_read, child_write),
                start_new_session=True,
            )
        except BaseException:
            os.close(host_read)
            os.close(host_write)
            raise
        finally:
            os.close(child_read)
            os.close(child_write)
        worker = cls(proc)
        try:
            await worker._connect(host_read, host_write, max_message_bytes)
        except BaseException:
            worker._abandon()
            raise
        return worker

    @classmethod
    async def _start_bundled(cls, spec: SpawnSpec, max_message_bytes: int) -> WorkerProcess:
        assert spec.bundle is not None
        made = socket_channel.materialize(spec.argv, spec.bundle, "/ptc-channel")
        try:
            proc = subprocess.Popen(
                made.argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=spec.cwd,
                env=dict(spec.env),
                start_new_session=True,
            )
        except BaseException:
            made.listener.close()
            socket_channel.remove(made.scratch)
            raise
        worker = cls(proc)
        worker.scratch = made.scratch
        try:
            await worker._watch_output()
            ends = await socket_channel.accept(made, worker.exited)
            if ends is None:
                detail = await _confinement_failure(worker, bundled=True)
                raise ChildGone if detail is None else ConfinementFailed(detail)
            worker._channel = await ControlChannel.open(*ends, max_message_bytes)
        except BaseException:
            worker._abandon()
            raise
        return worker

    async def _connect(self, host_read: int, host_write: int, max_message_bytes: int) -> None:
        await self._watch_output()
        self._channel = await ControlChannel.open(host_read, host_write, max_message_bytes)

    async def _watch_output(self) -> None:
        self._watch_exit()
        assert self.proc.stdout is not None and self.proc.stderr is not None
        for stream, pipe in (("fd1", self.proc.stdout), ("fd2", self.proc.stderr)):
            transport, _ = await self.loop.connect_read_pipe(functools.partial(_OutputPipe, self, stream), pipe)
            self._transports.append(transport)

    @property
    def channel(self) -> ControlChannel:
        assert self._channel is not None, "the channel exists once start() returned"
        return self._channel

    def _watch_exit(self) -> None:
        try:
            self._pidfd = os.pidfd_open(self.pid)
        except (AttributeError, OSError):
            # No pidfd (old kernel or not Linux): a thread waits instead.
            threading.Thread(target=self._wait_in_thread, name="ptc-child-wait", daemon=True).start()
            return
        self.loop.add_reader(self._pidfd, self._reap)

    def _wait_in_thread(self) -> None:
        self.proc.wait()
        with contextlib.suppress(RuntimeError):  # the loop may be closed by now
            self.loop.call_soon_threadsafe(self._mark_exited)

    def _reap(self) -> None:
        self._close_pidfd()
        self.proc.wait()
        self._mark_exited()

    def _close_pidfd(self) -> None:
        if self._pidfd is not None:
            self.loop.remove_reader(self._pidfd)
            os.close(self._pidfd)
            self._pidfd = None

    def _mark_exited(self) -> None:
        if not self.exited.done():
            self.exited.set_result(None)

    def _output(self, stream: str, data: bytes) -> None:
        if self._sink is None:
            self._early.append((stream, data))
        else:
            self._sink(stream, data)

    def _pipe_closed(self, stream: str) -> None:
        self._open.discard(stream)
        if not self._open and not self.drained.done():
            self.drained.set_result(None)

    def early_output(self) -> list[tuple[str, bytes]]:
        """What the child wrote before :meth:`attach_output` (kept until then)."""
        return list(self._early)

    def attach_output(self, sink: OutputSink) -> None:
        """Send stdout/stderr bytes (``fd1``/``fd2``) to ``sink``, starting with anything already received."""
        self._sink = sink
        early, self._early = self._early, []
        for stream, data in early:
            sink(stream, data)

    async def wait_ready(self) -> None:
        """Wait for the ``ready`` frame; anything else first is a protocol violation."""
        ready: asyncio.Future[None] = self.loop.create_future()

        def on_frame(frame: ChildFrame) -> None:
            if not ready.done():
                if isinstance(frame, Ready):
                    ready.set_result(None)
                else:
                    ready.set_exception(ProtocolViolation("before_ready", frame=type(frame).__name__.lower()))

        def on_violation(violation: ProtocolViolation) -> None:
            if not ready.done():
                ready.set_exception(violation)

        self.channel.attach(on_frame, on_violation)
        closed = asyncio.ensure_future(asyncio.shield(self.channel.closed))
        try:
            await asyncio.wait([ready, closed], return_when=asyncio.FIRST_COMPLETED)
        finally:
            closed.cancel()
        if not ready.done():
            ready.cancel()
            raise ChildGone
        ready.result()

    @property
    def alive(self) -> bool:
        return not self.exited.done()

    def kill_group(self) -> None:
        """SIGKILL the child's descendants (in its group or not, ADR 0044), then its whole process group."""
        if self.alive:
            kill_descendants(self.pid)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, signal.SIGKILL)

    async def wait_exit(self, timeout: float) -> bool:
        """Wait up to ``timeout`` for the child to exit on its own; ``True`` when it did."""
        try:
            await asyncio.wait_for(asyncio.shield(self.exited), timeout)
        except TimeoutError:
            return False
        return True

    async def stop(self, grace: float) -> None:
        """Kill the group, wait for the exit, drain stdout/stderr and the group (each bounded by ``grace``)."""
        self.kill_group()
        for waiter in (self.exited, self.drained):
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(waiter), grace)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(_group_gone(self.pid), grace)
        cgroup, self.cgroup = self.cgroup, None
        if cgroup is not None:
            await empty_and_remove(cgroup, grace)
        self._release()

    def _release(self) -> None:
        if self._channel is not None:
            self._channel.close()
        for transport in self._transports:
            transport.close()
        if self.proc.returncode is None:
            # Exit not observed within the grace (an unkillable process): stop watching, reap if possible.
            self._close_pidfd()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=0)
        scratch, self.scratch = self.scratch, None
        if scratch is not None:
            socket_channel.remove(scratch)

    def _abandon(self) -> None:
        """Synchronous cleanup for a failed or cancelled start."""
        self.kill_group()
        self._release()
        for pipe in (self.proc.stdout, self.proc.stderr):
            if pipe is not None:
                pipe.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=1)
        self._close_pidfd()

    def exit_detail(self) -> str:
        code = self.proc.returncode
        if code is None:
            return "still running"
        if code < 0:
            with contextlib.suppress(ValueError):
                return f"killed by {signal.Signals(-code).name}"
        return f"exit code {code}"


def _live_members(pgid: int) -> bool:
    """Whether process group ``pgid`` still has a member that is not a zombie (Linux ``/proc``)."""
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] not in (b"Z", b"X"):
            return True
    return False


async def _group_gone(pgid: int) -> None:
    """Return once every member of the group has died (SIGKILL is delivered asynchronously)."""
    delay = 0.001
    while _live_members(pgid):
        await asyncio.sleep(delay)
        delay = min(delay * 2, 0.05)


class ChildGone(Exception):
    """The child closed its channel or exited before ``ready``."""


class ConfinementFailed(ChildGone):
    """The child could not confine itself here (ADR 0049) and exited before ``ready``; ``detail`` says why."""

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


async def _confinement_failure(worker: WorkerProcess, *, bundled: bool = False) -> str | None:
    """What the child said when it exited for want of confinement, or ``None`` when it died otherwise.

    A ``bundled`` child's first process is the executor (``runsc``): any exit of it before ``ready`` means the
    sandbox could not be made, and what it said is the reason.
    """
    if not await worker.wait_exit(CONFINEMENT_REPORT_WAIT_S):
        return None
    if worker.proc.returncode != CONFINEMENT_FAILED_EXIT and not (bundled and worker.proc.returncode != 0):
        return None
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(asyncio.shield(worker.drained), CONFINEMENT_REPORT_WAIT_S)
    said = b"".join(data for stream, data in worker.early_output() if stream == "fd2")
    return said.decode("utf-8", "replace").strip()[-500:]


async def spawn(spec: SpawnSpec, max_message_bytes: int, enclosure: Enclosure | None = None) -> WorkerProcess:
    """Start a child for ``spec``, wait until it is ready and, with ``enclosure``, move it into a
    run cgroup (in a thread: the move waits for the kernel). Safe to cancel at any point."""
    worker = await WorkerProcess.start(spec, max_message_bytes)
    try:
        try:
            await worker.wait_ready()
        except ChildGone:
            detail = await _confinement_failure(worker, bundled=spec.bundle is not None)
            if detail is not None:
                raise ConfinementFailed(detail) from None
            raise
        if enclosure is not None:
            worker.cgroup = await asyncio.get_running_loop().run_in_executor(
                None, enclose, worker.pid, enclosure.memory_bytes, enclosure.max_processes
            )
    except BaseException:
        await worker.stop(0.5)
        raise
    return worker
