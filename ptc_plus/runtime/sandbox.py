"""Confinement of the program's process with bubblewrap (ADR 0013).

``danger-full-access`` runs the child directly (resource limits only).
``workspace-write`` and ``read-only`` run it inside ``bwrap`` with a minimal
filesystem: the system's ``/usr`` (and the merged-``/usr`` links), the
Python installation, the runtime's ``worker`` package, ``/dev``, a fresh
``/proc`` of a new PID namespace, and the workspace — writable only under
``workspace-write``, which also gets a private ``/tmp``. Everything else on
the host is absent, so it can be neither read nor written. The network
namespace is unshared unless the policy allows network. When ``bwrap`` is
missing or does not work here, :func:`probe` says so and the run ends with
outcome ``sandbox-unavailable``; it never falls back to running unconfined.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence
from pathlib import Path

import attrs

from ptc_plus.runtime.limits import RunLimits, SandboxPolicy

SANDBOX_RUNTIME_DIR = "/ptc-runtime"
"""Where the ``worker`` package appears inside the sandbox."""

_MERGED_USR = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
_NETWORK_FILES = ("/etc/resolv.conf", "/etc/hosts", "/etc/nsswitch.conf", "/etc/ssl", "/etc/ca-certificates")
_BASE_FILES = ("/etc/ld.so.cache", "/etc/localtime")


@attrs.frozen(kw_only=True)
class Availability:
    available: bool
    detail: str = ""


_probed: dict[str, Availability] = {}


async def probe(bwrap: str) -> Availability:
    """Whether ``bwrap`` exists and can build the namespaces we need here (cached per path)."""
    cached = _probed.get(bwrap)
    if cached is not None:
        return cached
    if not os.path.isfile(bwrap) or not os.access(bwrap, os.X_OK):
        result = Availability(available=False, detail=f"{bwrap} not found or not executable")
    else:
        result = await _try(bwrap)
    _probed[bwrap] = result
    return result


async def _try(bwrap: str) -> Availability:
    argv = [
        bwrap,
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        "--unshare-pid",
        "--unshare-net",
        "--die-with-parent",
        "--",
        "/bin/sh",
        "-c",
        ":",
    ]
    try:
        process = await asyncio.create_subprocess_exec(
            *argv, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE
        )
        _, err = await asyncio.wait_for(process.communicate(), timeout=30)
    except (OSError, TimeoutError) as error:
        return Availability(available=False, detail=f"{bwrap}: {error}")
    if process.returncode != 0:
        return Availability(available=False, detail=err.decode("utf-8", "replace").strip()[:500])
    return Availability(available=True)


def known_available(bwrap: str) -> bool:
    """Whether an earlier :func:`probe` of ``bwrap`` succeeded (never probes itself)."""
    cached = _probed.get(bwrap)
    return cached is not None and cached.available


def forget_probes() -> None:
    """Drop cached probe results (tests and long-lived hosts after installing bwrap)."""
    _probed.clear()


def python_prefix(python: str) -> str:
    """The installation directory holding interpreter ``python`` (``<prefix>/bin/python``)."""
    return str(Path(python).resolve().parent.parent)


def confine(
    command: list[str], limits: RunLimits, workspace: Path, runtime_dir: Path, protected: Sequence[Path] = ()
) -> list[str]:
    """``command`` wrapped in ``bwrap`` for ``limits.policy`` (unchanged for ``danger-full-access``).

    ``runtime_dir`` is bound read-only at :data:`SANDBOX_RUNTIME_DIR`; a
    command argument equal to ``str(runtime_dir)`` is rewritten to it.
    Each of ``protected`` (existing paths inside the workspace, see
    :mod:`ptc_plus.runtime.protected`) is bound read-only over the workspace
    bind, so neither its contents nor the mount point itself can be changed.
    The private ``/tmp`` is a tmpfs of at most ``limits.tmp_bytes``.
    """
    policy = limits.policy
    if not policy.confined:
        return command
    ws = str(workspace)
    argv = [limits.bwrap_path, "--ro-bind", "/usr", "/usr"]
    for path in _MERGED_USR:
        if os.path.islink(path):
            argv += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            argv += ["--ro-bind", path, path]
    for path in _BASE_FILES + (_NETWORK_FILES if limits.network else ()):
        argv += ["--ro-bind-try", path, path]
    prefix = python_prefix(limits.python)
    if not prefix.startswith("/usr/"):
        argv += ["--ro-bind", prefix, prefix]
    argv += ["--dev", "/dev", "--proc", "/proc"]
    if policy is SandboxPolicy.WORKSPACE_WRITE:
        argv += ["--size", str(limits.tmp_bytes), "--tmpfs", "/tmp", "--bind", ws, ws]
    else:
        argv += ["--ro-bind", ws, ws]
    for protected_path in protected:
        argv += ["--ro-bind", str(protected_path), str(protected_path)]
    argv += ["--ro-bind", str(runtime_dir / "worker"), f"{SANDBOX_RUNTIME_DIR}/worker"]
    argv += ["--remount-ro", "/", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
    if not limits.network:
        argv += ["--unshare-net"]
    argv += ["--die-with-parent", "--cap-drop", "ALL", "--chdir", ws, "--"]
    inner = [SANDBOX_RUNTIME_DIR if arg == str(runtime_dir) else arg for arg in command]
    return argv + inner
