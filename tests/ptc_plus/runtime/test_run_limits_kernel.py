"""The kernel fields of :class:`RunLimits`."""

from __future__ import annotations

import math

import pytest

from ptc_plus.runtime import InvalidLimits, KernelMode, RunLimits


def test_the_defaults() -> None:
    limits = RunLimits()
    assert limits.kernel is KernelMode.PROCESS
    assert limits.durable_replay is True
    assert (limits.kernel_idle_s, limits.max_kernels) == (600.0, 8)


def test_the_kernel_mode_is_converted_from_its_text() -> None:
    assert RunLimits(kernel="session").kernel is KernelMode.SESSION
    with pytest.raises(ValueError, match="forever"):
        RunLimits(kernel="forever")


@pytest.mark.parametrize("value", [0, -1, math.nan, math.inf])
def test_the_idle_time_is_positive(value: float) -> None:
    with pytest.raises(InvalidLimits):
        RunLimits(kernel_idle_s=value)


@pytest.mark.parametrize("value", [0, -3, 2.5])
def test_max_kernels_is_a_positive_integer(value: float) -> None:
    with pytest.raises(InvalidLimits):
        RunLimits(max_kernels=value)  # type: ignore[arg-type]
