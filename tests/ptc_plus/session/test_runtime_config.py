"""Session start under hostile or broken ``[runtime]`` settings: never looser, never blocked."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import pytest

from ptc_plus.config import RuntimeSection, SandboxPolicy
from ptc_plus.gate import GateSettings
from ptc_plus.runtime.run_limits import RunLimits
from ptc_plus.session.session_limits import configured_limits, session_limits

from .conftest import HostFactory, state_of, write_config, write_user_config


@pytest.mark.asyncio
async def test_a_workspace_cannot_turn_the_sandbox_off(open_host: HostFactory, workspace: Path) -> None:
    write_config(workspace, extra='\n[runtime]\npolicy = "danger-full-access"\nnetwork = true\n')
    host = await open_host()
    session = await host.start_session(title="t")
    state = state_of(host, session)
    assert state is not None
    assert (state.limits.policy, state.limits.network) == (SandboxPolicy.WORKSPACE_WRITE, False)
    text = session.command("/capabilities").text
    assert "runtime.policy" in text and "runtime.network" in text and "may only tighten" in text


@pytest.mark.asyncio
async def test_the_user_file_can(open_host: HostFactory, workspace: Path, tmp_path: Path) -> None:
    write_user_config(tmp_path, '[runtime]\npolicy = "danger-full-access"\nnetwork = true\n')
    host = await open_host()
    session = await host.start_session(title="t")
    state = state_of(host, session)
    assert state is not None and state.ptc
    assert (state.limits.policy, state.limits.network) == (SandboxPolicy.DANGER_FULL_ACCESS, True)


@pytest.mark.asyncio
async def test_a_nan_timeout_is_reported_and_never_blocks_the_session(open_host: HostFactory, workspace: Path) -> None:
    write_config(workspace, extra="\n[runtime]\ntimeout_s = nan\n")
    host = await open_host()
    session = await host.start_session(title="t")
    state = state_of(host, session)
    assert state is not None and state.limits.timeout_s == RuntimeSection().timeout_s
    assert "runtime.timeout_s" in session.command("/capabilities").text


def test_limits_the_runtime_refuses_fall_back_to_the_defaults_with_a_diagnostic() -> None:
    settings = GateSettings()
    configured = session_limits(RuntimeSection(timeout_s=math.nan), settings)
    assert configured.limits.timeout_s == RunLimits().timeout_s
    assert configured.diagnostic is not None and "default" in configured.diagnostic
    assert session_limits(RuntimeSection(), settings).diagnostic is None


def test_the_environment_switches_reach_the_run_limits(workspace: Path, tmp_path: Path) -> None:
    """``PTC_SEQUENTIAL`` and ``PTC_DEBUG`` reach a session's and ``exec``'s runs through the gate."""
    machine = {"XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    switched = configured_limits(workspace, env={**machine, "PTC_SEQUENTIAL": " TRUE ", "PTC_DEBUG": "opt-in"})
    assert switched.limits.sequential and switched.limits.debug_run
    plain = configured_limits(workspace, env=machine)
    assert not plain.limits.sequential and not plain.limits.debug_run


@pytest.mark.asyncio
async def test_a_missing_gvisor_is_sandbox_unavailable_never_bubblewrap_instead(
    open_host: HostFactory, workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # ADR 0127: the session asks the runtime about the *configured* executor; bubblewrap (installed here) does
    # not stand in for a missing runsc.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("bwrap",):
        found = shutil.which(tool)
        if found is not None:
            (bin_dir / tool).symlink_to(found)
    monkeypatch.setenv("PATH", str(bin_dir))
    write_user_config(tmp_path, '[runtime]\nexecutor = "gvisor"\n')
    host = await open_host()
    session = await host.start_session(title="t")
    state = state_of(host, session)
    assert state is not None and not state.ptc
    assert state.limits.executor == "gvisor"
    text = session.command("/capabilities").text
    assert "runsc not found or not executable" in text, text
