"""The ``[runtime]`` kernel keys reach a session's :class:`RunLimits` (ADR 0082)."""

from __future__ import annotations

from pathlib import Path

from ptc_plus.config import RuntimeSection
from ptc_plus.gate import GateSettings
from ptc_plus.runtime import KernelMode, RunLimits
from ptc_plus.session.session_limits import configured_limits, run_limits


def test_the_defaults_map_to_the_runtime_defaults() -> None:
    limits = run_limits(RuntimeSection(), GateSettings())
    default = RunLimits()
    assert (limits.kernel, limits.durable_replay, limits.kernel_idle_s, limits.max_kernels) == (
        default.kernel,
        default.durable_replay,
        default.kernel_idle_s,
        default.max_kernels,
    )


def test_each_key_reaches_the_run_limits() -> None:
    runtime = RuntimeSection(kernel=KernelMode.SESSION, durable_replay=False, kernel_idle_s=12.5, max_kernels=3)
    limits = run_limits(runtime, GateSettings())
    assert (limits.kernel, limits.durable_replay, limits.kernel_idle_s, limits.max_kernels) == (
        KernelMode.SESSION,
        False,
        12.5,
        3,
    )


def test_from_the_files(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    (workspace / ".ptc-plus").mkdir(parents=True)
    (workspace / ".ptc-plus" / "config.toml").write_text('[runtime]\nkernel = "session"\nmax_kernels = 2\n')
    user = tmp_path / "xdg" / "ptc-plus" / "config.toml"
    user.parent.mkdir(parents=True)
    user.write_text("[runtime]\ndurable_replay = false\nmax_kernels = 4\n")
    configured = configured_limits(workspace, env={"XDG_CONFIG_HOME": str(tmp_path / "xdg")})
    assert configured.loaded.issues == ()
    limits = configured.limits
    assert (limits.kernel, limits.durable_replay, limits.max_kernels) == (KernelMode.SESSION, False, 2)
