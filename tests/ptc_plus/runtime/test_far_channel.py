"""The control channel is a byte stream, not a local pipe (issue 35, ADR 0128).

The worker runs confined as usual (bubblewrap, the default policy, the real
workspace view and nothing else of the host's file system), but inside a
network namespace of its own whose only link to the host is a veth pair, and
with one TCP connection it made itself as its whole control channel
(:mod:`.far_side`). The same programs (nested calls back to the reference
host, frames far larger than a socket buffer, output, a thread left
running after ``done``) then end exactly as under the normal launcher.

Root and ``ip`` are needed to make the namespace; the test skips otherwise.
The namespace and its links are removed whatever happens.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from hookspecs import ToolContext, ToolDefinition
from hookspecs.reference import ReferenceHost
from ptc_plus.runtime import DirectoryStore, KernelCell, KernelMode
from ptc_plus.runtime.code_runtime import CodeRuntime
from ptc_plus.runtime.launcher import Launcher
from ptc_plus.runtime.run_limits import RunLimits
from ptc_plus.runtime.tool import run_code_definition

from .conftest import tool
from .far_side import FarSide, far_side, launcher_for, runtime_with, usable

pytestmark = pytest.mark.skipif(
    not usable(), reason="needs root and iproute2's `ip` to give the worker a network namespace with a veth pair"
)

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


def _host_tools() -> list[ToolDefinition]:
    async def echo(arguments: Any, context: ToolContext) -> Any:
        return arguments["text"]

    async def grow(arguments: Any, context: ToolContext) -> Any:
        return "y" * (int(arguments["size"]) - 8) + "12345678"

    return [tool("echo", echo), tool("grow", grow)]


@pytest.fixture
def side() -> Iterator[FarSide]:
    with far_side() as made:
        yield made


@pytest_asyncio.fixture
async def run_under(workspace: Path, tmp_path: Path) -> AsyncIterator[Callable[..., Any]]:
    hosts: list[ReferenceHost] = []
    runtimes: list[CodeRuntime] = []

    async def run(launcher: type[Launcher], code: str, policy: str = "workspace-write") -> dict[str, Any]:
        # Generous grace: a child that is told the host is done exits on its own long before it.
        runtime = runtime_with(launcher, RunLimits(policy=policy, warm_spare=False, cgroup=False, grace_s=60.0))
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
@pytest.mark.parametrize(
    "policy", [pytest.param("workspace-write", marks=pytest.mark.needs_bwrap), "danger-full-access"]
)
async def test_nested_calls_over_a_socket_from_another_network_namespace(
    side: FarSide, run_under: Callable[..., Any], policy: str
) -> None:
    far_launcher = launcher_for(side)
    near = await run_under(Launcher, PROGRAM, policy)
    far = await run_under(far_launcher, PROGRAM, policy)
    assert len(far_launcher.started) == 1, "the far run used the far launcher"
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
        worker = far_launcher.started[0]
        assert worker.proc.returncode == 0, worker.exit_detail()


@pytest.mark.asyncio
@pytest.mark.needs_bwrap
async def test_the_far_worker_has_its_own_network_namespace(side: FarSide, run_under: Callable[..., Any]) -> None:
    # The interfaces of the program's network namespace: loopback and the far end of the veth, nothing else.
    code = "return sorted(line.split(':')[0].strip() for line in open('/proc/net/dev').readlines()[2:])\n"
    far = await run_under(launcher_for(side), code)
    assert far["value"] == sorted(["lo", side.worker_link])


@pytest.mark.asyncio
@pytest.mark.needs_bwrap
async def test_a_kernel_keeps_its_namespace_across_cells_over_the_socket(
    side: FarSide, workspace: Path, tmp_path: Path
) -> None:
    far_launcher = launcher_for(side)
    limits = RunLimits(kernel=KernelMode.SESSION, warm_spare=False, cgroup=False, grace_s=60.0)
    runtime = runtime_with(far_launcher, limits)
    cell = KernelCell(session="k", store=DirectoryStore(tmp_path / "journal"))
    try:
        first = await runtime.run("kept = 'x' * 3", workspace=workspace, kernel=cell)
        assert first.ok, first.to_json()
        second = await runtime.run("return kept + '!'", workspace=workspace, kernel=cell)
        assert second.ok, second.to_json()
        assert second.value == "xxx!"
        recovery = runtime.recovery("k")
        assert recovery is not None and not recovery.cold and recovery.replayed == 0  # the live kernel held it
        assert len(far_launcher.started) == 1
    finally:
        await runtime.aclose()
    assert not far_launcher.started[0].alive
