"""Server processes never outlive their holders: checked with ``ps`` (SPEC §9, ADR 0072).

A server is shared by every session and host of the process that use the
same definition; it stops when the last host holding it closes, and a host
killed with ``SIGKILL`` takes its servers with it (``PR_SET_PDEATHSIG``).
"""

# ruff: noqa: F811 - the fixtures are imported from mcp_support (this directory has no conftest of its own)
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.ptc_plus.session.conftest import HostFactory, program_turns

from .mcp_support import (  # noqa: F401 - fixtures
    configure,
    fixture_table,
    isolated_env,
    mark,
    open_host,
    processes_with,
    settled_values,
    workspace,
)

CHILD = Path(__file__).with_name("mcp_host_child.py")
ROOT = Path(__file__).resolve().parents[3]


def gone(mark: str, within_s: float = 15.0) -> bool:
    """Whether every process with ``mark`` ended (the kernel's kill is asynchronous: poll, bounded)."""
    deadline = time.monotonic() + within_s
    while processes_with(mark):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


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
    assert pids[0] == pids[1] and processes_with(mark) == [pids[0]]
    await first.aclose()
    assert processes_with(mark) == [pids[0]]  # the other host still holds it
    await second.aclose()
    assert processes_with(mark) == []


def test_a_sigkilled_host_leaves_no_server_behind(tmp_path: Path, workspace: Path, mark: str) -> None:
    configure(tmp_path, fixture_table(mark))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    child = subprocess.Popen(
        [sys.executable, str(CHILD), str(workspace), str(tmp_path / "state")],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    try:
        assert child.stdout is not None
        line = child.stdout.readline()
        assert line.startswith("ready"), line
        assert processes_with(mark), "the server did not start"
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=30)
        assert gone(mark), f"server processes outlived their host: {processes_with(mark)}"
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        if child.stdout is not None:
            child.stdout.close()
        for pid in processes_with(mark):
            os.kill(pid, signal.SIGKILL)


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
    assert processes_with(mark) == []
    again = await open_host()
    resumed = await again.resume_session(session.agent.session_id, model=program_turns("return await tools.pid()"))
    await resumed.run_turn("again")
    second = settled_values(resumed)["pid"]
    assert second != first and processes_with(mark) == [second]
