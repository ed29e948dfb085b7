"""Scratch state directories: a killed ``ptc-plus exec`` leaves its own, the next start sweeps it (ADR 0088).

The end-to-end tests run the real ``ptc-plus exec`` in subprocesses with their
own ``TMPDIR``; the unit tests plant in a scratch temporary directory what a
hostile or unlucky ``/tmp`` may hold.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from ptc_plus.runtime import scratch_state_dir
from ptc_plus.runtime.state_dirs import OWNER_LOCK, sweep_stale

START_S = 120.0
"""How long a ``ptc-plus exec`` may take to start its program on a loaded machine (never a verdict)."""

BLOCKING_PROGRAM = "import time\nopen('program-started', 'w').close()\ntime.sleep(3600)\n"
"""Says it runs by a file in the workspace, then outlives any test (its exec is killed)."""


@pytest.fixture
def tmpdir_root(tmp_path: Path) -> Path:
    root = tmp_path / "tmp"
    root.mkdir(mode=0o700)
    return root


def exec_argv(workspace: Path) -> list[str]:
    executable = str(Path(sys.executable).with_name("ptc-plus"))
    return [executable, "exec", "-", "--workspace", str(workspace), "--timeout", "600"]


def exec_env(root: Path) -> dict[str, str]:
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8", "TMPDIR": str(root)}


def scratch_dirs(root: Path) -> list[str]:
    return sorted(name for name in os.listdir(root) if name.startswith("ptc-exec-"))


@pytest.fixture
def running_exec(tmpdir_root: Path, workspace: Path) -> Iterator[subprocess.Popen[bytes]]:
    """A ``ptc-plus exec`` whose program has started and blocks (killed at the end)."""
    process = subprocess.Popen(
        exec_argv(workspace),
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=exec_env(tmpdir_root),
        start_new_session=True,
    )
    try:
        assert process.stdin is not None
        process.stdin.write(BLOCKING_PROGRAM.encode())
        process.stdin.close()
        started = workspace / "program-started"
        deadline = time.monotonic() + START_S
        while not started.exists():  # an event, polled; the deadline only stops a hang
            assert process.poll() is None, "ptc-plus exec ended before its program started"
            assert time.monotonic() < deadline, f"the program did not start within {START_S:g} s"
            time.sleep(0.05)
        yield process
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=START_S)


def run_exec(root: Path, workspace: Path, code: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        exec_argv(workspace), input=code.encode(), capture_output=True, env=exec_env(root), timeout=START_S * 2
    )


@pytest.mark.needs_bwrap
def test_a_killed_exec_leaves_its_state_dir_and_the_next_start_sweeps_it(
    running_exec: subprocess.Popen[bytes], tmpdir_root: Path, workspace: Path
) -> None:
    [left] = scratch_dirs(tmpdir_root)
    os.killpg(running_exec.pid, signal.SIGKILL)
    running_exec.wait(timeout=START_S)
    assert scratch_dirs(tmpdir_root) == [left], "SIGKILL left nothing behind: the test proves nothing"
    finished = run_exec(tmpdir_root, workspace, "return 1")
    assert finished.returncode == 0, finished.stderr.decode(errors="replace")
    assert scratch_dirs(tmpdir_root) == []


@pytest.mark.needs_bwrap
def test_a_live_runs_state_dir_survives_a_concurrent_start(
    running_exec: subprocess.Popen[bytes], tmpdir_root: Path, workspace: Path
) -> None:
    [live] = scratch_dirs(tmpdir_root)
    finished = run_exec(tmpdir_root, workspace, "return 1")
    assert finished.returncode == 0, finished.stderr.decode(errors="replace")
    assert scratch_dirs(tmpdir_root) == [live]
    assert (tmpdir_root / live / OWNER_LOCK).is_file()
    assert running_exec.poll() is None


def stale_directory(root: Path, name: str, marker: bytes | None = None) -> Path:
    """A directory shaped as one whose owner died: the lock file with its marker, held by nobody."""
    directory = root / name
    directory.mkdir(mode=0o700)
    (directory / "program.py").write_text("secret = 1\n")
    if marker is None:
        marker = orjson.dumps({"version": 1, "pid": 1})
    (directory / OWNER_LOCK).write_bytes(marker)
    return directory


def test_only_provably_stale_directories_are_swept(tmpdir_root: Path, tmp_path: Path) -> None:
    stale = stale_directory(tmpdir_root, "ptc-exec-stale")
    elsewhere = stale_directory(tmp_path, "ptc-exec-target")
    (tmpdir_root / "ptc-exec-link").symlink_to(elsewhere)
    (tmpdir_root / "ptc-mcp-serve-nolock").mkdir(mode=0o700)
    open_to_others = stale_directory(tmpdir_root, "ptc-llm-open")
    open_to_others.chmod(0o755)
    stale_directory(tmpdir_root, "ptc-exec-nomarker", marker=b"")
    stale_directory(tmpdir_root, "someone-else-stale")
    lock_is_a_link = stale_directory(tmpdir_root, "ptc-exec-linklock")
    (lock_is_a_link / OWNER_LOCK).unlink()
    (lock_is_a_link / OWNER_LOCK).symlink_to(elsewhere / OWNER_LOCK)
    assert sweep_stale(tmpdir_root) == ("ptc-exec-stale",)
    assert not stale.exists()
    assert sorted(os.listdir(tmpdir_root)) == [
        "ptc-exec-link",
        "ptc-exec-linklock",
        "ptc-exec-nomarker",
        "ptc-llm-open",
        "ptc-mcp-serve-nolock",
        "someone-else-stale",
    ]
    assert (elsewhere / "program.py").read_text() == "secret = 1\n"


def test_a_held_directory_is_not_swept_and_its_own_is_removed_on_exit(tmpdir_root: Path) -> None:
    with scratch_state_dir("ptc-exec-", tmpdir_root) as mine:
        (mine / "program.py").write_text("x = 1\n")
        assert sweep_stale(tmpdir_root) == ()
        with scratch_state_dir("ptc-mcp-serve-", tmpdir_root) as other:
            assert mine.exists() and other.exists()
    assert os.listdir(tmpdir_root) == []


def test_an_unknown_prefix_is_refused(tmpdir_root: Path) -> None:
    with pytest.raises(ValueError), scratch_state_dir("ptc-other-", tmpdir_root):
        pass
