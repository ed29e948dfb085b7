"""A run's processes together stay under one memory and one process limit (ADR 0043).

Real forks in a real child; skipped where this machine lets the host create no cgroup.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ptc_plus.runtime.cgroup import RunCgroup, sweep_abandoned

from .conftest import RuntimeFactory

MIB = 1024 * 1024


def _cgroups_available() -> bool:
    probe = RunCgroup.create(64 * MIB, 8)
    if probe is None:
        return False
    probe.remove()
    return True


pytestmark = pytest.mark.skipif(not _cgroups_available(), reason="no cgroup can be created on this machine")

FORKS = """
import os
readers = []
forked = 0
hold_r, hold_w = os.pipe()
for _ in range(40):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        os.close(hold_w)
        os.read(hold_r, 1)
        os._exit(0)
    forked += 1
os.close(hold_w)
for _ in range(forked):
    os.wait()
return forked
"""

HOLDERS = """
import os, signal
children = []
for _ in range(4):
    ping_r, ping_w = os.pipe()
    pong_r, pong_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(ping_w)
            os.close(pong_r)
            block = bytearray(150 * 1024 * 1024)
            for offset in range(0, len(block), 4096):
                block[offset] = 1
            while os.read(ping_r, 1):
                os.write(pong_w, b"1")
        finally:
            os._exit(0)
    os.close(ping_r)
    os.close(pong_w)
    children.append((pid, ping_w, pong_r))
    # Wait until this child holds its block (or was killed for it) before the next one starts.
    os.write(ping_w, b"?")
    os.read(pong_r, 1)
held = 0
for pid, ping_w, pong_r in children:
    try:
        os.write(ping_w, b"?")
    except BrokenPipeError:
        continue
    held += os.read(pong_r, 1) == b"1"
for pid, ping_w, pong_r in children:
    try:
        os.kill(pid, 9)  # later siblings hold this child's pipe ends: no EOF to end it
    except ProcessLookupError:
        pass
    os.waitpid(pid, 0)
return held
"""


@pytest.mark.asyncio
async def test_forks_stop_at_the_process_limit(make_runtime: RuntimeFactory, workspace: Path) -> None:
    outcome = await make_runtime(max_processes=8).run(FORKS, workspace=workspace)
    assert outcome.ok, outcome.to_json()
    assert 0 < outcome.value < 8


@pytest.mark.asyncio
async def test_forked_children_share_one_memory_limit(make_runtime: RuntimeFactory, workspace: Path) -> None:
    # Each child stays under the per-process cap (RLIMIT_AS 384 MiB); four of them would hold 600 MiB.
    outcome = await make_runtime(memory_bytes=384 * MIB).run(HOLDERS, workspace=workspace)
    assert outcome.ok, outcome.to_json()
    assert outcome.value > 0 and outcome.value * 150 * MIB <= 384 * MIB


@pytest.mark.asyncio
async def test_the_run_cgroup_is_removed_at_settlement(make_runtime: RuntimeFactory, workspace: Path) -> None:
    runtime = make_runtime()
    code = "import subprocess, sys\nsubprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])\n1"
    outcome = await runtime.run(code, workspace=workspace)
    assert outcome.ok
    created = RunCgroup.create(64 * MIB, 8)
    assert created is not None
    siblings = {path.parent for path in created.dirs}
    created.remove()
    # Only this host's run cgroups: other hosts on the machine may be running.
    assert not [entry for parent in siblings for entry in parent.glob(f"ptc-plus-{os.getpid()}-*")]


def test_cgroups_of_a_killed_exec_are_swept(tmp_path: Path) -> None:
    """A SIGKILLed ``ptc-plus exec`` cannot clean up; the next host removes what it left (issue 8)."""
    created = RunCgroup.create(64 * MIB, 8)
    assert created is not None
    parents = [path.parent for path in created.dirs]
    created.remove()
    exe = Path(sys.executable).with_name("ptc-plus")
    argv = [str(exe), "exec", "-", "--policy", "danger-full-access", "--workspace", str(tmp_path)]
    process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    assert process.stdin is not None
    process.stdin.write(b"import time\ntime.sleep(60)\n")
    process.stdin.close()
    pattern = f"ptc-plus-{process.pid}-*"
    for _ in range(600):  # a hang guard, not a timing claim: until the run's cgroup exists
        if [entry for parent in parents for entry in parent.glob(pattern)]:
            break
        time.sleep(0.05)
    left = [entry for parent in parents for entry in parent.glob(pattern)]
    assert left, "the run never got a cgroup"
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    # The sweep kills what is inside and removes what it can; a group whose processes are still exiting stays
    # for the next sweep (cgroup v1 has one per hierarchy, so one sweep may remove the memory group but not yet
    # the pids group). Sweep until none is left; the bound is a hang guard, not a timing claim.
    for _ in range(1200):
        sweep_abandoned(parents)
        if not [entry for parent in parents for entry in parent.glob(pattern)]:
            break
        time.sleep(0.05)
    assert not [entry for parent in parents for entry in parent.glob(pattern)]
