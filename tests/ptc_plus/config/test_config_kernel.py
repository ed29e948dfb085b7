"""The ``[runtime]`` kernel keys (ADR 0082): defaults, values, precedence, bounds."""

from __future__ import annotations

import pytest

from ptc_plus.config import DEFAULT_CAPS, RuntimeSection
from ptc_plus.runtime import KernelMode

from .conftest import ConfigFiles


def test_the_defaults_are_a_fresh_process_per_run(files: ConfigFiles) -> None:
    runtime = files.load().config.runtime
    assert runtime.kernel is KernelMode.PROCESS
    assert runtime.durable_replay is True
    assert (runtime.kernel_idle_s, runtime.max_kernels) == (600.0, 8)


def test_each_key_is_read(files: ConfigFiles) -> None:
    files.write(user='[runtime]\nkernel = "session"\ndurable_replay = false\nkernel_idle_s = 30.5\nmax_kernels = 2\n')
    loaded = files.load()
    assert loaded.issues == ()
    runtime = loaded.config.runtime
    assert runtime.kernel is KernelMode.SESSION
    assert runtime.durable_replay is False
    assert (runtime.kernel_idle_s, runtime.max_kernels) == (30.5, 2)


@pytest.mark.parametrize(
    ("user", "workspace", "kernel", "durable"),
    [
        ('kernel = "session"\n', 'kernel = "process"\n', KernelMode.PROCESS, True),
        ('kernel = "process"\n', 'kernel = "session"\n', KernelMode.SESSION, True),
        ("durable_replay = false\n", "durable_replay = true\n", KernelMode.PROCESS, True),
        ("durable_replay = true\n", "durable_replay = false\n", KernelMode.PROCESS, False),
    ],
)
def test_the_workspace_wins_either_way(
    files: ConfigFiles, user: str, workspace: str, kernel: KernelMode, durable: bool
) -> None:
    """Not tighten-only: a kernel runs in the same sandbox a fresh process would (ADR 0082)."""
    files.write(user="[runtime]\n" + user, workspace="[runtime]\n" + workspace)
    loaded = files.load()
    assert loaded.issues == ()
    assert (loaded.config.runtime.kernel, loaded.config.runtime.durable_replay) == (kernel, durable)


def test_the_workspace_may_only_lower_the_kernel_resources(files: ConfigFiles) -> None:
    # Host resources are tighten-only from a workspace file (ADR 0086): lowering wins, raising is refused.
    files.write(
        user="[runtime]\nmax_kernels = 3\nkernel_idle_s = 10\n",
        workspace="[runtime]\nmax_kernels = 2\nkernel_idle_s = 20\n",
    )
    loaded = files.load()
    assert (loaded.config.runtime.max_kernels, loaded.config.runtime.kernel_idle_s) == (2, 10)
    assert loaded.origins["runtime.max_kernels"] == str(files.workspace_file)
    assert loaded.origins["runtime.kernel_idle_s"] == str(files.user_file)
    assert [(issue.path, issue.reason) for issue in loaded.issues] == [("runtime.kernel_idle_s", "loosening")]


@pytest.mark.parametrize(
    ("line", "path", "reason"),
    [
        ('kernel = "forever"', "runtime.kernel", "choice"),
        ('durable_replay = "no"', "runtime.durable_replay", "type"),
        ("kernel_idle_s = 0", "runtime.kernel_idle_s", "positive"),
        ("kernel_idle_s = -1.5", "runtime.kernel_idle_s", "positive"),
        ("kernel_idle_s = inf", "runtime.kernel_idle_s", "finite"),
        ("max_kernels = 0", "runtime.max_kernels", "positive"),
        ("max_kernels = 2.5", "runtime.max_kernels", "type"),
        (f"max_kernels = {DEFAULT_CAPS.max_kernels + 1}", "runtime.max_kernels", "above-cap"),
        (f"kernel_idle_s = {DEFAULT_CAPS.kernel_idle_s + 1}", "runtime.kernel_idle_s", "above-cap"),
    ],
)
def test_a_bad_value_is_an_issue_and_the_default_stays(files: ConfigFiles, line: str, path: str, reason: str) -> None:
    files.write(workspace=f"[runtime]\n{line}\ntimeout_s = 30\n")
    loaded = files.load()
    assert [(issue.path, issue.reason) for issue in loaded.issues] == [(path, reason)]
    key = path.removeprefix("runtime.")
    assert getattr(loaded.config.runtime, key) == getattr(RuntimeSection(), key)
    assert loaded.config.runtime.timeout_s == 30  # the neighbouring key still counts
    assert loaded.issues[0].message("zh")
