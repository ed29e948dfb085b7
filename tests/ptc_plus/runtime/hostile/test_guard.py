"""The escape checks themselves: each must fail on a real violation made on the host (or an unconfined run).

A check that cannot fail would make every hostile test pass vacuously.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from . import guard
from .conftest import Hostile
from .guard import MIB, HostGuard, add_host_key, keys_with

pytestmark = [pytest.mark.needs_bwrap]


@pytest.fixture
def host_guard(tmp_path: Path) -> HostGuard:
    workspace = tmp_path / "workspace"
    outside = tmp_path / "outside"
    workspace.mkdir()
    outside.mkdir()
    (outside / "secret.txt").write_text("secret")
    checker = HostGuard(
        marker="ptcguardtest" + os.urandom(6).hex(), workspace=workspace, outside=outside, scope=tmp_path
    )
    checker.snapshot()
    return checker


def _only(checker: HostGuard, needle: str) -> None:
    found = checker.violations(memory_bound=1 << 40, settle_s=0.2)
    assert len(found) == 1 and needle in found[0], found
    checker.repair()
    checker.snapshot()
    assert checker.violations(memory_bound=1 << 40, settle_s=0.2) == []


def test_nothing_changed_is_clean(host_guard: HostGuard) -> None:
    assert host_guard.violations(memory_bound=1 << 40, settle_s=0.2) == []


def test_changed_new_and_chmodded_bait_files_are_caught(host_guard: HostGuard) -> None:
    (host_guard.outside / "secret.txt").write_text("changed")
    assert any("secret.txt" in v for v in host_guard.violations(1 << 40, 0.2))
    (host_guard.outside / "secret.txt").write_text("secret")
    (host_guard.outside / "planted").write_text("x")
    assert any("planted" in v for v in host_guard.violations(1 << 40, 0.2))
    (host_guard.outside / "planted").unlink()
    (host_guard.outside / "secret.txt").chmod(0o777)
    assert any("secret.txt" in v for v in host_guard.violations(1 << 40, 0.2))
    (host_guard.outside / "secret.txt").chmod(0o644)
    (host_guard.workspace.parent / "beside").write_text("x")
    assert any("next to the workspace" in v and "beside" in v for v in host_guard.violations(1 << 40, 0.2))


def test_a_changed_kernel_setting_is_caught_and_restored(
    host_guard: HostGuard, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A fake /proc/sys: the real one is shared with everything else running on this machine.
    settings = {"vm/swappiness": "60\n"}
    monkeypatch.setattr(guard, "read_sysctls", lambda: dict(settings))
    monkeypatch.setattr(guard, "write_sysctl", settings.__setitem__)
    host_guard.snapshot()
    settings["vm/swappiness"] = "37\n"
    _only(host_guard, "kernel setting vm/swappiness changed")
    assert settings["vm/swappiness"] == "60\n"


def test_a_stray_process_is_caught_by_marker_and_by_directory(host_guard: HostGuard) -> None:
    marked = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", host_guard.marker], cwd="/")
    try:
        _only(host_guard, "marker in its command line")
    finally:
        marked.kill()
        marked.wait()
    env = {"PTC_HOSTILE": host_guard.marker}
    by_env = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], cwd="/", env=env)
    try:
        _only(host_guard, "marker in its environment")
    finally:
        by_env.kill()
        by_env.wait()
    by_cwd = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], cwd=host_guard.workspace)
    try:
        _only(host_guard, "working directory")
    finally:
        by_cwd.kill()
        by_cwd.wait()


def test_setuid_and_setgid_files_are_caught_and_stripped(host_guard: HostGuard) -> None:
    planted = host_guard.workspace / "deep" / "suid"
    planted.parent.mkdir()
    planted.write_bytes(b"#!/bin/sh\n")
    planted.chmod(0o4755)
    _only(host_guard, "setuid/setgid")
    assert planted.stat().st_mode & 0o7777 == 0o755
    planted.chmod(0o2755)
    _only(host_guard, "setuid/setgid")


def test_a_marker_key_is_caught_and_removed(host_guard: HostGuard) -> None:
    add_host_key(f"planted-{host_guard.marker}", b"payload")
    _only(host_guard, "marker keys")
    assert keys_with(host_guard.marker) == {}


def test_marker_files_in_shared_host_directories_are_caught(host_guard: HostGuard) -> None:
    planted = Path("/tmp", f"{host_guard.marker}-planted")
    planted.write_text("x")
    _only(host_guard, "new marker files on the host in /tmp")
    assert not planted.exists()


def test_a_changed_visible_host_file_is_caught(
    host_guard: HostGuard, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "host").mkdir()
    visible = tmp_path / "host" / "visible"
    visible.write_text("x")
    monkeypatch.setattr(guard, "VISIBLE_HOST_FILES", (visible,))
    host_guard.snapshot()
    os.link(visible, tmp_path / "host" / "hardlink")
    found = host_guard.violations(1 << 40, 0.2)
    assert len(found) == 1 and "host file" in found[0], found


def test_host_memory_growth_is_caught(host_guard: HostGuard) -> None:
    ballast = bytearray(b"x") * (300 * MIB)
    try:
        found = host_guard.violations(memory_bound=256 * MIB, settle_s=0.2)
    finally:
        del ballast
    assert len(found) == 1 and "host peak memory grew" in found[0], found


@pytest.mark.asyncio
async def test_the_harness_fails_a_run_that_escapes(hostile: Hostile) -> None:
    # Unconfined on purpose: the program really writes the bait outside its workspace.
    code = "open(OUTSIDE + '/secret.txt', 'a').write('escaped')\nreturn 'wrote'"
    with pytest.raises(pytest.fail.Exception, match="ESCAPED: bait tree changed"):
        await hostile.run(code, policy="danger-full-access")


def test_the_cli_harness_fails_a_host_that_does_not_settle(hostile_cli: Hostile) -> None:
    with pytest.raises(pytest.fail.Exception, match="did not settle the run within 2 s"):
        hostile_cli.cli("import time\ntime.sleep(30)", timeout=60, guard_s=2)
