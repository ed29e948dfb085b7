"""A worker on the far side of a real socket, in a network namespace of its own (ADR 0128).

Used by ``test_far_channel.py`` and by ``benchmarks/runtime.py`` (its far-channel row). As root with
iproute2's ``ip``, :func:`far_side` makes a network namespace and a veth pair (the host's end and the
worker's end, a ``/30`` between them) and removes both on the way out, whatever happened.
:func:`launcher_for` gives a :class:`~ptc_plus.runtime.launcher.Launcher` whose children run inside that
namespace under the normal policy and confinement, and inherit nothing but stdin/stdout/stderr: a few
lines before the worker's real entry connect a TCP socket to a listener on the host's end, and that one
socket is both ends of the control channel.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import socket
import subprocess
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import ClassVar

import attrs

from ptc_plus.runtime import code_runtime, sandbox
from ptc_plus.runtime.launcher import Launcher, SandboxUnavailableError
from ptc_plus.runtime.process import RUNTIME_DIR, ChildGone, SpawnSpec, WorkerProcess, scrubbed_environment
from ptc_plus.runtime.run_limits import RunLimits

IP = shutil.which("ip")

CONNECT_WAIT_S = 120.0
"""Generous: only a worker that never connects (a broken set-up) waits this long."""

SHIM = (
    "import socket,sys;"
    "s=socket.create_connection((sys.argv[2],int(sys.argv[3])));fd=str(s.detach());"
    "sys.path.append(sys.argv[1]);from worker.main import main;sys.path.pop();main([fd,fd,*sys.argv[4:]])"
)
"""Connect to the host over the veth, then the worker's real entry with that one socket as both channel ends."""


def usable() -> bool:
    """Whether this process can make network namespaces and veth pairs (root, with ``ip``)."""
    return os.geteuid() == 0 and IP is not None


@attrs.frozen
class FarSide:
    """A network namespace holding one end of a veth pair; the host holds the other."""

    namespace: str
    host_address: str
    worker_address: str
    worker_link: str


def _ip(*args: str) -> None:
    assert IP is not None
    subprocess.run([IP, *args], check=True, capture_output=True, timeout=60)


@contextlib.contextmanager
def far_side() -> Iterator[FarSide]:
    """A fresh namespace and veth pair, removed on exit (also when the set-up itself failed half-way)."""
    tag = f"{os.getpid() % 100000}{os.urandom(2).hex()}"
    namespace, host_link, worker_link = f"ptc-far-{tag}", f"pfh{tag}", f"pfw{tag}"
    octet = int.from_bytes(os.urandom(1), "big")
    side = FarSide(namespace, f"10.213.{octet}.1", f"10.213.{octet}.2", worker_link)
    try:
        _ip("netns", "add", namespace)
        _ip("link", "add", host_link, "type", "veth", "peer", "name", worker_link)
        _ip("link", "set", worker_link, "netns", namespace)
        _ip("addr", "add", f"{side.host_address}/30", "dev", host_link)
        _ip("link", "set", host_link, "up")
        _ip("-n", namespace, "addr", "add", f"{side.worker_address}/30", "dev", worker_link)
        _ip("-n", namespace, "link", "set", worker_link, "up")
        yield side
    finally:
        # Deleting the namespace destroys the veth end inside it and with it its peer; the explicit
        # delete covers a set-up that failed before the move.
        for args in (("netns", "delete", namespace), ("link", "delete", host_link)):
            with contextlib.suppress(subprocess.SubprocessError, OSError):
                _ip(*args)


class FarWorker(WorkerProcess):
    """A child whose control channel is one TCP connection it made itself from its own network namespace."""

    @classmethod
    async def start_far(cls, spec: SpawnSpec, max_message_bytes: int, listener: socket.socket) -> FarWorker:
        proc = subprocess.Popen(
            spec.argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=spec.cwd,
            env=dict(spec.env),
            start_new_session=True,
        )  # no pass_fds: nothing but stdio is inherited
        worker = cls(proc)
        try:
            loop = asyncio.get_running_loop()
            accepted = asyncio.ensure_future(loop.sock_accept(listener))
            exited = loop.run_in_executor(None, proc.wait)
            done, _ = await asyncio.wait([accepted, exited], timeout=CONNECT_WAIT_S, return_when="FIRST_COMPLETED")
            if accepted not in done:
                accepted.cancel()
                raise ChildGone(f"the worker did not connect ({worker.exit_detail()})")
            connection, _ = accepted.result()
            read_fd = connection.detach()
            await worker._connect(read_fd, os.dup(read_fd), max_message_bytes)
        except BaseException:
            worker._abandon()
            raise
        return worker


class FarLauncher(Launcher):
    """The normal launcher's policy and confinement, each child started on the far side of :attr:`far`."""

    far: ClassVar[FarSide]
    started: ClassVar[list[FarWorker]]

    def far_spec(self, workspace: Path, protected: Sequence[Path], port: int) -> SpawnSpec:
        assert IP is not None
        command = [self.limits.python, "-I", "-S", "-X", "utf8", "-c", SHIM, str(RUNTIME_DIR)]
        command += [self.far.host_address, str(port)]
        argv = sandbox.confine(command, self.limits, workspace, RUNTIME_DIR, protected)
        # The namespace `ip netns exec` enters is the worker's own; bubblewrap must not replace it with another.
        if "--unshare-net" in argv:
            argv.remove("--unshare-net")
        env = scrubbed_environment(workspace, self.limits.debug_run)
        return SpawnSpec(argv=(IP, "netns", "exec", self.far.namespace, *argv), cwd=str(workspace), env=env)

    async def acquire(self, workspace: Path, protected: Sequence[Path] = ()) -> WorkerProcess:
        if self.limits.policy.confined:
            availability = await sandbox.probe(self.limits.bwrap_path, self.limits.python)
            if not availability.available:
                raise SandboxUnavailableError(availability.detail)
        with socket.create_server((self.far.host_address, 0)) as listener:
            listener.setblocking(False)
            spec = self.far_spec(workspace, protected, listener.getsockname()[1])
            worker = await FarWorker.start_far(spec, self.limits.max_message_bytes, listener)
        try:
            await worker.wait_ready()
        except BaseException:
            await worker.stop(0.5)
            raise
        self.started.append(worker)
        return worker

    def prepare_spare(self, workspace: Path, protected: Sequence[Path] = ()) -> None:
        """None: each far child gets its own listener in :meth:`acquire`."""


def launcher_for(side: FarSide) -> type[FarLauncher]:
    """A :class:`FarLauncher` bound to ``side``, with its own list of the children it started."""
    return type("BoundFarLauncher", (FarLauncher,), {"far": side, "started": []})


def runtime_with(launcher: type[Launcher], limits: RunLimits) -> code_runtime.CodeRuntime:
    """A :class:`~ptc_plus.runtime.code_runtime.CodeRuntime` whose runs (and kernels) get children from ``launcher``."""
    normal = code_runtime.Launcher
    code_runtime.Launcher = launcher  # type: ignore[misc]
    try:
        return code_runtime.CodeRuntime(limits)
    finally:
        code_runtime.Launcher = normal  # type: ignore[misc]
