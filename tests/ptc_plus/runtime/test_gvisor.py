"""The gVisor executor behind the executor seam (ADR 0127): real ``runsc`` runs, the same promises as bubblewrap.

Skipped without ``runsc`` (with the reason) unless ``TESTS_REQUIRE_GVISOR=1``; the hostile-program suite
(``hostile/``) runs every escape attempt under it as well.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
from pathlib import Path

import pytest

from ptc_plus.runtime import Availability, ExecutorName, OutcomeKind, RunLimits, executor_availability
from ptc_plus.runtime.executor import EXECUTORS, executor_for

from .conftest import RuntimeFactory

REQUIRED = "TESTS_REQUIRE_GVISOR"


@pytest.fixture
def gvisor() -> dict[str, str]:
    """Limits overrides selecting gVisor; skips (or fails, when required) without ``runsc``."""
    if shutil.which("runsc") is None:
        if os.environ.get(REQUIRED) == "1":
            pytest.fail(f"{REQUIRED}=1 but runsc is not on PATH", pytrace=False)
        pytest.skip("gVisor (runsc) is not installed: apt-get install runsc")
    if os.geteuid() != 0:
        pytest.skip("runsc runs containers only for a root host here (no rootless mode)")
    return {"executor": "gvisor", "policy": "workspace-write"}


def test_the_registry_names_every_executor_once() -> None:
    assert set(EXECUTORS) == set(ExecutorName)
    assert all(EXECUTORS[name].name is name for name in ExecutorName)
    assert executor_for(RunLimits(executor="gvisor")).name is ExecutorName.GVISOR
    assert ExecutorName.BUBBLEWRAP.strength < ExecutorName.GVISOR.strength


@pytest.mark.asyncio
async def test_a_missing_runsc_is_sandbox_unavailable_and_bubblewrap_never_stands_in(
    make_runtime: RuntimeFactory, workspace: Path, tmp_path: Path
) -> None:
    missing = str(tmp_path / "no-such-runsc")
    limits = RunLimits(executor="gvisor", runsc_path=missing)
    assert await executor_availability(limits) == Availability(
        available=False, detail=f"{missing} not found or not executable"
    )
    for policy in ("workspace-write", "read-only"):
        outcome = await make_runtime(policy=policy, executor="gvisor", runsc_path=missing).run(
            "return 1", workspace=workspace
        )
        assert outcome.failure is not None and outcome.failure.kind is OutcomeKind.SANDBOX_UNAVAILABLE
        assert missing in outcome.failure.message()
    # The explicit opt-in needs no executor at all.
    outcome = await make_runtime(policy="danger-full-access", executor="gvisor", runsc_path=missing).run(
        "return 1", workspace=workspace
    )
    assert outcome.ok and outcome.value == 1


PROBE = """
import os, socket, errno
def attempt(fn):
    try:
        fn()
    except OSError as error:
        return errno.errorcode.get(error.errno, str(error.errno))
    return 'allowed'
open('made.txt', 'w').write('x')
def connect():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(5)
    s.connect(('1.1.1.1', 53))
return {
    'ids': [os.getuid(), os.geteuid(), os.getgid(), os.getegid()],
    'kernel': open('/proc/version').read(),
    'outside': attempt(lambda: open(%r).read()),
    'tmp': attempt(lambda: open('/tmp/scratch', 'w').write('x')),
    'protected': attempt(lambda: open('.ptc-plus/config.toml', 'w').write('x')),
    'network': attempt(connect),
    'env': sorted(os.environ),
}
"""


@pytest.mark.asyncio
async def test_a_workspace_write_run_under_gvisor_keeps_the_policys_promises(
    make_runtime: RuntimeFactory, workspace: Path, tmp_path: Path, gvisor: dict[str, str]
) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("secret")
    (workspace / ".ptc-plus").mkdir()
    (workspace / ".ptc-plus" / "config.toml").write_text("")
    outcome = await make_runtime(**gvisor).run(PROBE % str(outside), workspace=workspace)
    assert outcome.ok, outcome.to_json()
    value = outcome.value
    assert value["ids"] == [65534] * 4  # never root inside
    assert "gVisor" in value["kernel"] or "4.4.0" in value["kernel"]  # gVisor's own kernel answers, not the host's
    assert value["outside"] == "ENOENT"  # nothing of the host outside the views
    assert value["tmp"] == "allowed"  # a private /tmp under workspace-write
    assert value["protected"] == "EROFS"  # protected paths stay read-only
    assert value["network"] in {"ENETUNREACH", "EHOSTUNREACH", "ECONNREFUSED"}  # --network=none
    assert value["env"] == ["HOME", "LANG", "PATH", "PTC_DEBUG_RUN", "TMPDIR"]
    assert (workspace / "made.txt").read_text() == "x"
    assert (workspace / ".ptc-plus" / "config.toml").read_text() == ""


@pytest.mark.asyncio
async def test_a_read_only_run_under_gvisor_cannot_write(
    make_runtime: RuntimeFactory, workspace: Path, gvisor: dict[str, str]
) -> None:
    code = "try:\n    open('x', 'w')\nexcept OSError as e:\n    return e.errno\nreturn 'wrote'"
    outcome = await make_runtime(**{**gvisor, "policy": "read-only"}).run(code, workspace=workspace)
    assert outcome.ok and outcome.value == 30, outcome.to_json()  # EROFS
    assert not (workspace / "x").exists()


@pytest.mark.asyncio
async def test_gvisor_runs_end_with_the_same_outcome_kinds(
    make_runtime: RuntimeFactory, workspace: Path, gvisor: dict[str, str]
) -> None:
    # The deadline covers the start-up too: only the endless loop gets a short one.
    looping = make_runtime(**gvisor, timeout_s=2.0, grace_s=1.0)
    timed_out = await looping.run("while True:\n    pass", workspace=workspace)
    assert timed_out.failure is not None and timed_out.failure.kind is OutcomeKind.TIMEOUT
    runtime = make_runtime(**gvisor)
    failed = await runtime.run("raise ValueError('no')", workspace=workspace)
    assert failed.failure is not None and failed.failure.kind is OutcomeKind.EXCEPTION
    exited = await runtime.run("import os\nos._exit(3)", workspace=workspace)
    assert exited.failure is not None and exited.failure.kind is OutcomeKind.WORKER_EXIT


def _scratch_dirs() -> set[str]:
    return {name for name in os.listdir(tempfile.gettempdir()) if name.startswith("ptc-gvisor-")}


@pytest.mark.asyncio
async def test_a_warm_gvisor_spare_serves_the_next_run_and_nothing_is_left_behind(
    make_runtime: RuntimeFactory, workspace: Path, gvisor: dict[str, str]
) -> None:
    before = _scratch_dirs()
    runtime = make_runtime(**gvisor, warm_spare=True)
    first = await runtime.run("import os\nreturn os.getpid()", workspace=workspace)
    assert first.ok, first.to_json()
    spare = runtime._launcher.spare
    assert spare is not None
    worker = await asyncio.shield(spare)  # started after the first run, before the second asks
    second = await runtime.run("return 2", workspace=workspace)
    assert second.ok and second.value == 2
    assert not worker.alive  # the spare ran the second program and was stopped with it
    await runtime.aclose()
    assert _scratch_dirs() <= before  # every bundle, state directory and socket removed
