"""The control channel is a byte stream, not a local pipe (issue 35, ADR 0128).

The worker runs confined as usual (bubblewrap, the default policy, the real
workspace view and nothing else of the host's file system), but inside a
network namespace of its own whose only link to the host is a veth pair. It
inherits no descriptor but stdin/stdout/stderr: before the worker's real
entry (``worker.main.main``) runs, a few lines connect a TCP socket to a
listener on the host's end of the veth, and that one socket is both ends
of the channel. The same programs (nested calls back to the reference
host, frames far larger than a socket buffer, output, a thread left
running after ``done``) then end exactly as under the normal launcher.

Root and ``ip`` are needed to make the namespace; the test skips otherwise.
The namespace and its links are removed whatever happens.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import socket
import subprocess
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, ClassVar

import attrs
import pytest
import pytest_asyncio

from hookspecs import ToolContext
from hookspecs.reference import ReferenceHost
from ptc_plus.runtime import code_runtime, sandbox
from ptc_plus.runtime.launcher import Launcher, SandboxUnavailableError
from ptc_plus.runtime.process import RUNTIME_DIR, ChildGone, SpawnSpec, WorkerProcess, scrubbed_environment
from ptc_plus.runtime.run_limits import RunLimits
from ptc_plus.runtime.tool import run_code_definition

from .conftest import tool

IP = shutil.which("ip")

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or IP is None,
    reason="needs root and iproute2's `ip` to give the worker a network namespace of its own with a veth pair",
)

CONNECT_WAIT_S = 120.0
"""Generous: only a worker that never connects (a broken set-up) waits this long."""

SHIM = (
    "import socket,sys;"
    "s=socket.create_connection((sys.argv[2],int(sys.argv[3])));fd=str(s.detach());"
    "sys.path.append(sys.argv[1]);from worker.main import main;sys.path.pop();main([fd,fd,*sys.argv[4:]])"
)
"""Connect to the host over the veth, then the worker's real entry with that one socket as both channel ends."""


@attrs.frozen
class FarSide:
    """A network namespace holding one end of a veth pair; the host holds the other."""

    namespace: str
    host_address: str
    worker_address: str


def _ip(*args: str) -> None:
    assert IP is not None
    subprocess.run([IP, *args], check=True, capture_output=True, timeout=60)


@pytest.fixture
def far_side() -> Iterator[FarSide]:
    tag = f"{os.getpid() % 100000}{os.urandom(2).hex()}"
    namespace, host_link, worker_link = f"ptc-far-{tag}", f"pfh{tag}", f"pfw{tag}"
    octet = int.from_bytes(os.urandom(1), "big")
    side = FarSide(namespace, f"10.213.{octet}.1", f"10.213.{octet}.2")
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
    """The normal launcher's policy and confinement, the worker started on the far side of :attr:`far`."""

    far: ClassVar[FarSide | None] = None
    started: ClassVar[list[FarWorker]] = []

    def far_spec(self, workspace: Path, protected: Sequence[Path], port: int) -> SpawnSpec:
        assert self.far is not None and IP is not None
        command = [self.limits.python, "-I", "-S", "-X", "utf8", "-c", SHIM, str(RUNTIME_DIR)]
        command += [self.far.host_address, str(port)]
        argv = sandbox.confine(command, self.limits, workspace, RUNTIME_DIR, protected)
        # The namespace `ip netns exec` enters is the worker's own; bubblewrap must not replace it with another.
        if "--unshare-net" in argv:
            argv.remove("--unshare-net")
        env = scrubbed_environment(workspace, self.limits.debug_run)
        return SpawnSpec(argv=(IP, "netns", "exec", self.far.namespace, *argv), cwd=str(workspace), env=env)

    async def acquire(self, workspace: Path, protected: Sequence[Path] = ()) -> WorkerProcess:
        assert self.far is not None
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
        FarLauncher.started.append(worker)
        return worker


BIG = 6 << 20
"""Bytes in one frame each way: far more than a socket's send buffer, so writes find it full."""

PROGRAM = f"""
import asyncio, threading, time
echoed = await asyncio.gather(*[tools.echo(text=str(i) * (i % 7)) for i in range(40)])
big = await tools.echo(text="x" * {BIG})
grown = await tools.grow(size={BIG})
for line in range(200):
    print("line", line)
# A thread left running: after ``done`` the worker waits for the host's end of the channel.
threading.Thread(target=time.sleep, args=(3600,), daemon=True).start()
return {{"echoed": echoed, "big": len(big), "grown": len(grown), "grown_tail": grown[-8:]}}
"""


def _host_tools() -> list[Any]:
    async def echo(arguments: Any, context: ToolContext) -> Any:
        return arguments["text"]

    async def grow(arguments: Any, context: ToolContext) -> Any:
        return "y" * (int(arguments["size"]) - 8) + "12345678"

    return [tool("echo", echo), tool("grow", grow)]


@pytest_asyncio.fixture
async def run_under(workspace: Path, tmp_path: Path) -> AsyncIterator[Callable[..., Any]]:
    hosts: list[ReferenceHost] = []
    runtimes: list[code_runtime.CodeRuntime] = []

    async def run(launcher: type[Launcher], code: str, policy: str = "workspace-write") -> dict[str, Any]:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(code_runtime, "Launcher", launcher)
            # Generous grace: a child that is told the host is done exits on its own long before it.
            limits = RunLimits(policy=policy, warm_spare=False, cgroup=False, grace_s=60.0)
            runtime = code_runtime.CodeRuntime(limits)
        runtimes.append(runtime)
        host = ReferenceHost(
            workspace=workspace,
            state_dir=tmp_path / f"state-{len(hosts)}",
            tools=[*_host_tools(), run_code_definition(runtime=runtime)],
            load_entry_points=False,
        )
        hosts.append(host)
        session = await host.start_session(user_id="u", title="t", session_id=f"s-{len(hosts)}")
        result = await session.call_tool("run_code", {"description": "test", "code": code})
        assert result.ok, result
        value: dict[str, Any] = result.value
        return value

    yield run
    for runtime in runtimes:
        await runtime.aclose()
    for host in hosts:
        await host.aclose()


@pytest.mark.asyncio
@pytest.mark.parametrize("policy", ["workspace-write", "danger-full-access"])
async def test_nested_calls_over_a_socket_from_another_network_namespace(
    far_side: FarSide, run_under: Callable[..., Any], policy: str
) -> None:
    if policy != "danger-full-access" and not (await sandbox.probe(RunLimits().bwrap_path)).available:
        pytest.skip("bubblewrap cannot confine here: the far worker runs under the default policy")
    FarLauncher.far, FarLauncher.started = far_side, []
    near = await run_under(Launcher, PROGRAM, policy)
    far = await run_under(FarLauncher, PROGRAM, policy)
    assert len(FarLauncher.started) == 1, "the far run used the far launcher"
    expected = {
        "echoed": [str(i) * (i % 7) for i in range(40)],
        "big": BIG,
        "grown": BIG,
        "grown_tail": "12345678",
    }
    assert near["value"] == expected
    assert far["value"] == near["value"]
    assert far["calls"] == near["calls"] == 42
    assert far["logs"] == near["logs"]
    if policy == "danger-full-access":
        # The interpreter is the child itself (under bubblewrap the host's sweep kills it): it ended on its
        # own once the host shut down its direction of the socket, not by the stop's SIGKILL after the grace.
        worker = FarLauncher.started[0]
        assert worker.proc.returncode == 0, worker.exit_detail()


@pytest.mark.asyncio
async def test_the_far_worker_has_its_own_network_namespace(far_side: FarSide, run_under: Callable[..., Any]) -> None:
    if not (await sandbox.probe(RunLimits().bwrap_path)).available:
        pytest.skip("bubblewrap cannot confine here: the far worker runs under the default policy")
    FarLauncher.far, FarLauncher.started = far_side, []
    # The interfaces of the program's network namespace: loopback and the far end of the veth, nothing else.
    code = "return sorted(line.split(':')[0].strip() for line in open('/proc/net/dev').readlines()[2:])\n"
    far = await run_under(FarLauncher, code)
    assert far["value"] == sorted(["lo", "pfw" + far_side.namespace.removeprefix("ptc-far-")])
