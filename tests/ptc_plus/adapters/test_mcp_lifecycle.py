"""Server processes never outlive their holders: checked with ``ps`` (ADR 0072).

A server is shared by every session and host of the process that use the
same definition; it stops when the last host holding it closes, and a host
killed with ``SIGKILL`` takes its servers with it, and everything they started
(the supervisor, ADR 0093).
"""

# ruff: noqa: F811 - the fixtures are imported from mcp_support (this directory has no conftest of its own)
from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.ptc_plus.session.conftest import HostFactory, program_turns

from .mcp_support import (  # noqa: F401 - fixtures
    FIXTURE,
    configure,
    fixture_table,
    isolated_env,
    mark,
    open_host,
    processes_with,
    servers_with,
    settled_values,
    within,
    workspace,
)

CHILD = Path(__file__).with_name("mcp_host_child.py")
ROOT = Path(__file__).resolve().parents[3]


def gone(mark: str, within_s: float = 60.0) -> bool:
    """Whether every process with ``mark`` ended (the kernel's kill is asynchronous: poll, generously bounded)."""
    return within(lambda: not processes_with(mark), within_s)


@pytest.mark.asyncio
async def test_a_server_is_shared_by_hosts_and_stops_with_the_last_one(
    open_host: HostFactory, workspace: Path, tmp_path: Path, mark: str
) -> None:
    configure(tmp_path, fixture_table(mark))
    first, second = await open_host(), await open_host(state_dir=tmp_path / "state-2")
    pids = []
    for host in (first, second):
        session = await host.start_session(title="t", model=program_turns("return await tools.pid()"))
        await session.run_turn("go")
        pids.append(settled_values(session)["pid"])
    assert pids[0] == pids[1] and servers_with(mark) == [pids[0]]
    await first.aclose()
    assert servers_with(mark) == [pids[0]]  # the other host still holds it
    await second.aclose()
    assert servers_with(mark) == []


def run_and_kill_host(
    tmp_path: Path, workspace: Path, mark: str, calls: list[str], settled: Callable[[], bool]
) -> None:
    """Start a host subprocess whose servers take ``calls`` (open), wait for ``settled``, ``kill -9`` it.

    Asserts that every process carrying ``mark`` (supervisors, wrappers, servers) ends afterwards.
    """
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    child = subprocess.Popen(
        [sys.executable, str(CHILD), str(workspace), str(tmp_path / "state"), *calls],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert child.stdout is not None
        line = child.stdout.readline()
        assert line.startswith("ready"), line or (child.stderr.read() if child.stderr else "")
        assert processes_with(mark), "the server did not start"
        assert within(settled), f"the servers did not reach their state: {processes_with(mark)}"
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=30)
        assert gone(mark), f"server processes outlived their host: {processes_with(mark)}"
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        for stream in (child.stdout, child.stderr):
            if stream is not None:
                stream.close()
        for pid in processes_with(mark):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def test_a_sigkilled_host_leaves_no_server_behind(tmp_path: Path, workspace: Path, mark: str) -> None:
    configure(tmp_path, fixture_table(mark))
    run_and_kill_host(tmp_path, workspace, mark, [":freeze"], lambda: bool(stopped(mark)))


def test_a_sigkilled_host_leaves_nothing_of_wrapped_busy_or_hung_servers(
    tmp_path: Path, workspace: Path, mark: str
) -> None:
    """One server direct and busy, one under ``sh -c`` and busy, one under a Python parent and stopped."""
    python, fixture = sys.executable, str(FIXTURE)
    shell = f'"{python}" "{fixture}" {mark}; exit $?'  # the trailing exit keeps sh from exec-ing the server
    spawner = "import subprocess, sys; sys.exit(subprocess.call(sys.argv[1:]))"
    configure(
        tmp_path,
        wrapped_table("direct", python, [fixture, mark], prefix=""),
        wrapped_table("shell", "sh", ["-c", shell], prefix="sh_"),
        wrapped_table("spawner", python, ["-c", spawner, python, fixture, mark], prefix="py_"),
    )
    # At least the sh, the Python parent and 3 servers (and a supervisor each); the spawned one is stopped.
    run_and_kill_host(
        tmp_path,
        workspace,
        mark,
        [":block", "sh_:block", "py_:freeze"],
        lambda: len(processes_with(mark)) >= 5 and len(stopped(mark)) == 1,
    )


def wrapped_table(name: str, command: str, args: list[str], *, prefix: str) -> str:
    return (
        f"\n[mcp.servers.{name}]\ncommand = {json.dumps(command)}\nargs = {json.dumps(args)}\n"
        f'env = {{ FIXTURE_PREFIX = "{prefix}" }}\n'
    )


def stopped(mark: str) -> list[int]:
    """Processes with ``mark`` in state ``T`` (stopped)."""
    out = subprocess.run(["ps", "-ww", "-eo", "pid=,stat=,args="], capture_output=True, text=True, check=True).stdout
    return [int(line.split()[0]) for line in out.splitlines() if mark in line and line.split()[1].startswith("T")]


@pytest.mark.asyncio
async def test_a_resumed_session_opens_its_servers_again_in_a_new_host(
    open_host: HostFactory, workspace: Path, tmp_path: Path, mark: str
) -> None:
    configure(tmp_path, fixture_table(mark))
    host = await open_host()
    session = await host.start_session(title="t", model=program_turns("return await tools.pid()"))
    await session.run_turn("go")
    first = settled_values(session)["pid"]
    await host.aclose()
    assert servers_with(mark) == []
    again = await open_host()
    resumed = await again.resume_session(session.agent.session_id, model=program_turns("return await tools.pid()"))
    await resumed.run_turn("again")
    second = settled_values(resumed)["pid"]
    assert second != first and servers_with(mark) == [second]
