"""Runtime limits and options: one frozen value, defaults as the sandbox's limits documented in docs/config.md.

Every field is configurable; deployments lower or raise the caps. The
model-facing ``timeout_s`` is resolved against :attr:`RunLimits.max_timeout_s`
by :func:`resolve_timeout`.
"""

from __future__ import annotations

import enum
import math
import os
import shutil
import sys
from typing import Any

import attrs

from ptc_plus.runtime.errors import InvalidLimits, InvalidTimeout
from ptc_plus.sandbox_policy import SandboxPolicy

MIB = 1024 * 1024


class ExecutorName(enum.StrEnum):
    """Which executor confines programs (ADR 0127), listed weakest boundary first."""

    BUBBLEWRAP = "bubblewrap"
    """Linux namespaces and a seccomp filter on the host's own kernel (ADR 0013, 0049)."""
    GVISOR = "gvisor"
    """gVisor's user-space kernel (``runsc``): the program's system calls never reach the host kernel directly."""

    @classmethod
    def default(cls) -> ExecutorName:
        """The executor where nothing chooses one (the config's default too)."""
        return cls.BUBBLEWRAP

    @property
    def strength(self) -> int:
        """Rank of the boundary: a workspace file may only raise it (ADR 0127)."""
        return list(ExecutorName).index(self)


class KernelMode(enum.StrEnum):
    """How successive ``run_code`` calls of one session relate."""

    PROCESS = "process"
    """A fresh process per run: nothing a program defines outlives it."""
    SESSION = "session"
    """One live kernel per session: names defined by one cell remain in the next (the stateful REPL)."""


def _positive(instance: object, attribute: attrs.Attribute[Any], value: Any) -> None:
    if not (isinstance(value, int | float) and math.isfinite(value) and value > 0):
        raise InvalidLimits(detail=f"{attribute.name} must be a positive number, got {value!r}")


@attrs.frozen(kw_only=True)
class RunLimits:
    """Limits and options of ``run_code`` runs.

    Sizes are bytes, times seconds. ``cpu_seconds`` defaults to the
    timeout cap plus the grace: the wall-clock timer is the real bound, the
    CPU limit only backs it up if the host itself stalls.
    """

    timeout_s: float = attrs.field(default=120.0, validator=_positive)
    max_timeout_s: float = attrs.field(default=600.0, validator=_positive)
    max_output_bytes: int = attrs.field(default=64 * MIB, validator=_positive)
    memory_bytes: int = attrs.field(default=512 * MIB, validator=_positive)
    max_message_bytes: int = attrs.field(default=128 * MIB, validator=_positive)
    max_pending_calls: int = attrs.field(default=128, validator=_positive)
    grace_s: float = attrs.field(default=3.0, validator=_positive)
    open_files: int = attrs.field(default=256, validator=_positive)
    max_processes: int = attrs.field(default=64, validator=_positive)
    """Processes of one run: the run cgroup's ``pids.max``; without a cgroup, ``RLIMIT_NPROC`` (ADR 0043)."""
    max_file_bytes: int = attrs.field(default=1024 * MIB, validator=_positive)
    """``RLIMIT_FSIZE``: the largest file a program may write (a larger write fails with ``EFBIG``)."""
    policy: SandboxPolicy = attrs.field(default=SandboxPolicy.WORKSPACE_WRITE, converter=SandboxPolicy)
    network: bool = False
    executor: ExecutorName = attrs.field(factory=ExecutorName.default, converter=ExecutorName)
    """What confines a confined policy's programs (ADR 0127); ``danger-full-access`` ignores it."""
    bwrap_path: str = attrs.field(factory=lambda: shutil.which("bwrap") or "bwrap")
    runsc_path: str = attrs.field(factory=lambda: shutil.which("runsc") or "runsc")
    """gVisor's ``runsc`` (for ``executor = "gvisor"``)."""
    python: str = attrs.field(factory=lambda: os.path.realpath(sys.executable))
    sequential: bool = False
    """``PTC_SEQUENTIAL=true``: nested calls run one at a time."""
    debug_run: bool = False
    """``PTC_DEBUG_RUN`` seen by the program (``true`` when the raw ``PTC_DEBUG`` is non-empty)."""
    warm_spare: bool = True
    """Keep one started, idle child ready for the next run."""
    cgroup: bool = True
    """Put each run in its own cgroup (total memory and process count) when this machine allows it."""
    kernel: KernelMode = attrs.field(default=KernelMode.PROCESS, converter=KernelMode)
    """``session``: a session's runs are cells of one stateful kernel (ADR 0081)."""
    durable_replay: bool = True
    """``False``: a kernel is never rebuilt by replay; it starts empty and every cell is volatile."""
    kernel_idle_s: float = attrs.field(default=600.0, validator=_positive)
    """Seconds an idle kernel stays alive before it is stopped (its journal remains)."""
    max_kernels: int = attrs.field(default=8, validator=_positive)
    """Live kernels at once; beyond that the least recently used one is stopped."""

    def __attrs_post_init__(self) -> None:
        if self.timeout_s > self.max_timeout_s:
            raise InvalidLimits(detail=f"timeout_s {self.timeout_s} exceeds max_timeout_s {self.max_timeout_s}")
        for name in (
            "max_output_bytes",
            "memory_bytes",
            "max_message_bytes",
            "max_pending_calls",
            "max_file_bytes",
            "max_kernels",
        ):
            if not isinstance(getattr(self, name), int):
                raise InvalidLimits(detail=f"{name} must be an integer")

    @property
    def cpu_seconds(self) -> int:
        return math.ceil(self.max_timeout_s + self.grace_s)

    @property
    def max_reply_bytes(self) -> int:
        """The largest reply frame the host sends a program (ADR 0051).

        At most ``max_message_bytes``, and a quarter of ``memory_bytes``: the
        child holds a reply's bytes and its decoded text at once (twice the
        bytes for ASCII, up to five times with one astral character), then the
        value. A reply that still does not fit fails in the child as
        ``reply-undecodable``; a larger result fails on the host as
        ``result-too-large``. Either is a ``ToolCallError`` in the program.
        """
        return min(self.max_message_bytes, self.memory_bytes // 4)

    @property
    def tmp_bytes(self) -> int:
        """Size of a ``workspace-write`` program's private ``/tmp`` (host RAM): the memory cap."""
        return self.memory_bytes

    @property
    def group_memory_bytes(self) -> int:
        """Memory of all a run's processes together, ``/tmp`` pages included (the run cgroup's limit)."""
        extra = self.tmp_bytes if self.policy is SandboxPolicy.WORKSPACE_WRITE else 0
        return self.memory_bytes + extra


@attrs.frozen(kw_only=True)
class ResolvedTimeout:
    seconds: float
    clamped_from: float | None = None
    """The requested value when it was above the cap and clamped."""


def resolve_timeout(requested: object, limits: RunLimits) -> ResolvedTimeout:
    """The run's wall-clock budget from the model-facing ``timeout_s`` (``None``: the default).

    :raises InvalidTimeout: not a finite number greater than zero.
    """
    if requested is None:
        return ResolvedTimeout(seconds=limits.timeout_s)
    if isinstance(requested, bool) or not isinstance(requested, int | float) or not math.isfinite(requested):
        raise InvalidTimeout(value=repr(requested))
    if requested <= 0:
        raise InvalidTimeout(value=repr(requested))
    if requested > limits.max_timeout_s:
        return ResolvedTimeout(seconds=limits.max_timeout_s, clamped_from=float(requested))
    return ResolvedTimeout(seconds=float(requested))
