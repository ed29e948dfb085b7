"""Escape attempts under each confined policy; each must be refused (bubblewrap required)."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from ptc_plus.runtime import sandbox
from ptc_plus.runtime.run_limits import RunLimits

from .conftest import RuntimeFactory

pytestmark = pytest.mark.needs_bwrap

CONFINED = ("workspace-write", "read-only")


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    path = tmp_path / "outside"
    path.mkdir()
    (path / "secret.txt").write_text("host secret")
    return path


def _attempt(action: str) -> str:
    """Program text: run ``action``; return 'refused: <error>' or 'allowed'."""
    body = "\n".join(f"    {line}" for line in action.splitlines())
    return (
        f"try:\n{body}\nexcept Exception as error:\n    return 'refused: ' + type(error).__name__\nreturn 'allowed'\n"
    )


@pytest.mark.asyncio
@pytest.mark.parametrize("policy", CONFINED)
async def test_write_outside_the_workspace_is_refused(
    make_runtime: RuntimeFactory, workspace: Path, outside: Path, policy: str
) -> None:
    runtime = make_runtime(policy=policy)
    for target in (outside / "planted.txt", Path("/etc/ptc-planted"), Path.home() / "ptc-planted"):
        outcome = await runtime.run(_attempt(f"open({str(target)!r}, 'w').write('x')"), workspace=workspace)
        assert outcome.ok, outcome.to_json()
        assert outcome.value.startswith("refused"), (target, outcome.value)
        assert not target.exists()


@pytest.mark.asyncio
@pytest.mark.parametrize("policy", CONFINED)
async def test_read_outside_the_binds_is_refused(
    make_runtime: RuntimeFactory, workspace: Path, outside: Path, policy: str
) -> None:
    runtime = make_runtime(policy=policy)
    for target in (outside / "secret.txt", Path("/etc/hostname"), Path(__file__)):
        outcome = await runtime.run(_attempt(f"open({str(target)!r}).read()"), workspace=workspace)
        assert outcome.value == "refused: FileNotFoundError", (target, outcome.to_json())


@pytest.mark.asyncio
@pytest.mark.parametrize("policy", CONFINED)
async def test_network_is_refused(make_runtime: RuntimeFactory, workspace: Path, policy: str) -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        code = _attempt(f"import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=5)")
        outcome = await make_runtime(policy=policy).run(code, workspace=workspace)
    assert outcome.value == "refused: ConnectionRefusedError", outcome.to_json()


@pytest.mark.asyncio
async def test_network_policy_allows_loopback(make_runtime: RuntimeFactory, workspace: Path) -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        code = _attempt(f"import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=5).close()")
        outcome = await make_runtime(policy="workspace-write", network=True).run(code, workspace=workspace)
    assert outcome.value == "allowed", outcome.to_json()


@pytest.mark.asyncio
@pytest.mark.parametrize("policy", (*CONFINED, "danger-full-access"))
async def test_host_environment_is_invisible(
    make_runtime: RuntimeFactory, workspace: Path, policy: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PTC_TEST_HOST_SECRET", "s3cret")
    code = (
        "import os\n"
        "found = [k for k, v in os.environ.items() if 's3cret' in v or k == 'PTC_TEST_HOST_SECRET']\n"
        f"try:\n    found.append(open('/proc/{os.getpid()}/environ', 'rb').read().decode(errors='replace'))\n"
        "except OSError:\n    pass\n"
        "return [sorted(os.environ), [f for f in found if 's3cret' in f or f == 'PTC_TEST_HOST_SECRET']]\n"
    )
    outcome = await make_runtime(policy=policy).run(code, workspace=workspace)
    assert outcome.ok, outcome.to_json()
    names, leaks = outcome.value
    assert leaks == []
    assert set(names) <= {"HOME", "LANG", "PATH", "PTC_DEBUG_RUN", "TMPDIR", "LC_CTYPE", "PWD"}


@pytest.mark.asyncio
async def test_workspace_write_can_write_the_workspace(make_runtime: RuntimeFactory, workspace: Path) -> None:
    code = "open('made.txt', 'w').write('ok')\nimport tempfile\ntempfile.TemporaryFile().close()\nreturn 1"
    outcome = await make_runtime(policy="workspace-write").run(code, workspace=workspace)
    assert outcome.ok, outcome.to_json()
    assert (workspace / "made.txt").read_text() == "ok"


@pytest.mark.asyncio
async def test_read_only_reads_but_never_writes_the_workspace(make_runtime: RuntimeFactory, workspace: Path) -> None:
    (workspace / "data.txt").write_text("readable")
    runtime = make_runtime(policy="read-only")
    outcome = await runtime.run("return open('data.txt').read()", workspace=workspace)
    assert outcome.value == "readable"
    outcome = await runtime.run(_attempt("open('new.txt', 'w')"), workspace=workspace)
    assert outcome.value == "refused: OSError"
    assert sorted(p.name for p in workspace.iterdir()) == ["data.txt"]


@pytest.mark.asyncio
async def test_setsid_grandchild_dies_with_the_sandbox(make_runtime: RuntimeFactory, workspace: Path) -> None:
    marker = f"ptc-escapee-{os.getpid()}-{id(workspace)}"
    code = (
        "import subprocess, sys\n"
        f"argv = [sys.executable, '-c', 'import time; time.sleep(600)', '{marker}']\n"
        "subprocess.Popen(argv, start_new_session=True)\n"
        "return 'spawned'\n"
    )
    outcome = await make_runtime(policy="workspace-write").run(code, workspace=workspace)
    assert outcome.ok, outcome.to_json()
    from .test_outcomes import _processes_with

    assert _processes_with(marker) == []


def test_confine_leaves_full_access_alone(workspace: Path) -> None:
    command = ["python", "-c", "pass"]
    limits = RunLimits(policy="danger-full-access")
    assert sandbox.confine(command, limits, workspace, Path("/runtime")) == command
    confined = sandbox.confine(command, RunLimits(policy="read-only"), workspace, Path("/runtime"))
    assert "--unshare-net" in confined and confined[-4:-1] == command
    assert confined[-1].startswith(sandbox.CONFINE_FLAG)
    assert ["--ro-bind", str(workspace), str(workspace)] == confined[confined.index(str(workspace)) - 1 :][:3]
    networked = sandbox.confine(command, RunLimits(policy="workspace-write", network=True), workspace, Path("/r"))
    assert "--unshare-net" not in networked


@pytest.mark.asyncio
async def test_private_tmp_and_files_are_bounded(make_runtime: RuntimeFactory, workspace: Path) -> None:
    mib = 1024 * 1024
    runtime = make_runtime(policy="workspace-write", memory_bytes=256 * mib, max_file_bytes=8 * mib)
    code = (
        "import errno\n"
        "def fill(path, mib):\n"
        "    try:\n"
        "        with open(path, 'wb') as handle:\n"
        "            for _ in range(mib):\n"
        "                handle.write(b'x' * (1 << 20))\n"
        "    except OSError as error:\n"
        "        return errno.errorcode[error.errno]\n"
        "    return 'written'\n"
        "return [fill('/tmp/a', 6), fill('big.bin', 9), fill('/tmp/b', 7), fill('/tmp/c', 7), fill('/tmp/d', 7)]\n"
    )
    outcome = await runtime.run(code, workspace=workspace)
    assert outcome.ok, outcome.to_json()
    # Each file stays under 8 MiB; /tmp (the 256 MiB memory cap) is not reached by these.
    assert outcome.value == ["written", "EFBIG", "written", "written", "written"]
    assert (workspace / "big.bin").stat().st_size == 8 * mib
    small = make_runtime(policy="workspace-write", memory_bytes=64 * mib)
    code = (
        "try:\n"
        "    f = open('/tmp/fill', 'wb')\n"
        "    [f.write(b'x' * (1 << 20)) for _ in range(80)]\n"
        "except OSError as e:\n"
        "    return e.errno\n"
    )
    outcome = await small.run(code, workspace=workspace)
    assert outcome.value == 28  # ENOSPC: the private /tmp holds at most the memory cap
