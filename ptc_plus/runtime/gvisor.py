"""The gVisor executor (ADR 0127): the worker runs on ``runsc``'s user-space kernel, from a generated OCI bundle.

``runsc do`` shows the whole host file system (read-only, with a writable
overlay) and runs the command as root, so it cannot give the policies'
views. Each spawn is a ``runsc run`` of a bundle written into a private
scratch directory (:mod:`ptc_plus.runtime.socket_channel`): an empty
read-only root with the same binds as under bubblewrap (``/usr``, the merged
``/usr`` links, the Python installation with its ``site-packages`` hidden,
the worker package, the workspace read-only or writable, protected paths
read-only over it, a private ``/tmp`` under ``workspace-write``), the
network off (``--network=none``) unless the policy allows it, and the
process as :data:`SANDBOX_UID`/:data:`SANDBOX_GID` with no new privileges.
gVisor has no idmapped mounts, so the program is given ``CAP_DAC_OVERRIDE``
(inside gVisor's kernel only, ambient so that its subprocesses keep it) to
write the workspace the invoking user owns; the files it creates land owned by
the sandbox uid. Inside, the worker applies the same seccomp filter as under
bubblewrap (``worker/confine.py``, without the root steps).

The control channel cannot be an inherited pipe (``runsc`` passes only
stdio to the container), so it is a Unix socket in the scratch directory,
bound read-only at :data:`CHANNEL_DIR`; the worker connects to it before
``ready`` (``--host-uds=open``) and the host accepts one connection, then
removes the socket. The run cgroup holds the sentry and the gofer too, so
its process cap would count their threads: the program's process count is
``RLIMIT_NPROC`` inside gVisor instead (:attr:`ProcessCap.CHILD`), and the
cgroup's limits leave room for the sentry.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs
import orjson

from ptc_plus.runtime import sandbox
from ptc_plus.runtime.confinement import Availability, ProcessCap
from ptc_plus.runtime.process import RUNTIME_DIR, Enclosure, SpawnSpec, scrubbed_environment
from ptc_plus.runtime.run_limits import MIB, ExecutorName, RunLimits
from ptc_plus.runtime.worker.main import CONFINE_FLAG
from ptc_plus.sandbox_policy import SandboxPolicy

CHANNEL_DIR = "/ptc-channel"
"""Where the control socket's directory appears inside the sandbox."""
SANDBOX_UID = SANDBOX_GID = sandbox.SANDBOX_UID
PLATFORM = "ptrace"
"""gVisor's platform: ``ptrace`` works everywhere ``runsc`` does (``kvm`` needs nested virtualisation; this
Debian build has no ``systrap``), at the price of two context switches per system call (ADR 0127)."""
SENTRY_MEMORY_BYTES = 256 * MIB
"""Room in the run cgroup for gVisor's own sentry and gofer, above the program's memory."""
SENTRY_TASKS = 1024
"""Room in the run cgroup's ``pids.max`` for the sentry's and gofer's threads."""
_CAPABILITIES = ["CAP_DAC_OVERRIDE"]
_probed: dict[tuple[str, str], Availability] = {}


def runsc_argv(runsc: str, network: bool) -> list[str]:
    """``runsc run`` of the bundle; ``{state}``, ``{bundle}`` and ``{id}`` are filled in per spawn."""
    return [
        runsc,
        "--root",
        "{state}",
        f"--platform={PLATFORM}",
        f"--network={'host' if network else 'none'}",
        "--host-uds=open",
        "--ignore-cgroups",
        "run",
        "--bundle",
        "{bundle}",
        "{id}",
    ]


def _bind(source: str, target: str, *, writable: bool = False) -> dict[str, Any]:
    return {"destination": target, "type": "bind", "source": source, "options": ["rbind", "rw" if writable else "ro"]}


def bundle_config(command: list[str], limits: RunLimits, workspace: Path, protected: Sequence[Path]) -> dict[str, Any]:
    """The OCI ``config.json`` for ``command`` under ``limits.policy`` (``{channel_dir}`` filled in per spawn)."""
    ws = str(workspace)
    mounts = [_bind("/usr", "/usr")]
    for path in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(path):
            mounts.append(_bind(os.path.realpath(path), path))
        elif os.path.isdir(path):
            mounts.append(_bind(path, path))
    network_files = ("/etc/resolv.conf", "/etc/hosts", "/etc/nsswitch.conf", "/etc/ssl", "/etc/ca-certificates")
    for path in ("/etc/ld.so.cache", "/etc/localtime", *(network_files if limits.network else ())):
        if os.path.exists(path):
            mounts.append(_bind(os.path.realpath(path), path))
    for path, source in sandbox.identity_files(SANDBOX_UID, SANDBOX_GID):
        mounts.append(_bind(source, path))
    prefix = sandbox.python_prefix(limits.python)
    if not prefix.startswith("/usr/"):
        mounts.append(_bind(prefix, prefix))
        # The worker runs with -S: third-party packages installed into the interpreter are none of the program's.
        for site_packages in sandbox.site_packages(prefix):
            mounts.append({"destination": site_packages, "type": "tmpfs", "source": "tmpfs", "options": ["mode=0555"]})
    mounts.append({"destination": "/proc", "type": "proc", "source": "proc"})
    # The program holds CAP_DAC_OVERRIDE in gVisor's kernel, which would let it write gVisor's own kernel settings
    # (bubblewrap binds them read-only, worker/confine.py): an empty read-only /proc/sys hides them instead. gVisor's
    # /proc has none of the other interfaces bubblewrap makes read-only (sysrq-trigger, irq, bus, fs).
    mounts.append({"destination": "/proc/sys", "type": "tmpfs", "source": "tmpfs", "options": ["ro", "mode=0555"]})
    writable = limits.policy is SandboxPolicy.WORKSPACE_WRITE
    if writable:
        size = f"size={limits.tmp_bytes}"
        mounts.append({"destination": "/tmp", "type": "tmpfs", "source": "tmpfs", "options": [size, "mode=1777"]})
    mounts.append(_bind(ws, ws, writable=writable))
    if writable:
        # As under bubblewrap: a mount point can be neither renamed nor removed, so the parents of a protected path
        # are bound over themselves (still writable) and the program cannot carry the path away by its parent.
        for parent in sorted({str(p) for path in protected for p in path.parents if workspace in p.parents}):
            mounts.append(_bind(parent, parent, writable=True))
    for protected_path in protected:
        mounts.append(_bind(str(protected_path), str(protected_path)))
    mounts.append(_bind(str(RUNTIME_DIR / "worker"), f"{sandbox.SANDBOX_RUNTIME_DIR}/worker"))
    mounts.append(_bind("{channel_dir}", CHANNEL_DIR))
    inner = [sandbox.SANDBOX_RUNTIME_DIR if arg == str(RUNTIME_DIR) else arg for arg in command]
    env = scrubbed_environment(workspace, limits.debug_run)
    return {
        "ociVersion": "1.0.0",
        "process": {
            "user": {"uid": SANDBOX_UID, "gid": SANDBOX_GID},
            "args": [*inner, CONFINE_FLAG + "{}"],
            "env": [f"{key}={value}" for key, value in env],
            "cwd": ws,
            "noNewPrivileges": True,
            "capabilities": {kind: _CAPABILITIES for kind in ("bounding", "effective", "permitted", "ambient")},
        },
        "root": {"path": "rootfs", "readonly": True},
        "hostname": "sandbox",
        "mounts": mounts,
        "linux": {"namespaces": [{"type": kind} for kind in ("pid", "network", "ipc", "uts", "mount")]},
    }


@attrs.frozen
class GVisor:
    name: ExecutorName = ExecutorName.GVISOR
    process_cap: ProcessCap = ProcessCap.CHILD

    async def probe(self, limits: RunLimits) -> Availability:
        key = (limits.runsc_path, limits.python)
        cached = _probed.get(key)
        if cached is None:
            cached = await self._try(limits)
            _probed[key] = cached
        return cached

    def known_available(self, limits: RunLimits) -> bool:
        cached = _probed.get((limits.runsc_path, limits.python))
        return cached is not None and cached.available

    def spec(self, command: list[str], limits: RunLimits, workspace: Path, protected: Sequence[Path]) -> SpawnSpec:
        config = orjson.dumps(bundle_config(command, limits, workspace, protected)).decode()
        argv = runsc_argv(limits.runsc_path, limits.network)
        # runsc itself gets a minimal environment; the program's is in the bundle.
        return SpawnSpec(argv=tuple(argv), cwd="/", env=(("PATH", "/usr/bin:/bin"),), bundle=config)

    def enclosure(self, limits: RunLimits) -> Enclosure:
        return Enclosure(
            memory_bytes=limits.group_memory_bytes + SENTRY_MEMORY_BYTES,
            max_processes=limits.max_processes + SENTRY_TASKS,
        )

    async def _try(self, limits: RunLimits) -> Availability:
        runsc = limits.runsc_path
        if not os.path.isfile(runsc) or not os.access(runsc, os.X_OK):
            return Availability(available=False, detail=f"{runsc} not found or not executable")
        if os.geteuid() != 0:
            return Availability(available=False, detail=f"{runsc} needs the host to run as root here")
        # The probe starts a real worker (the whole bundle and the channel) and checks it becomes ready.
        from ptc_plus.runtime.process import ChildGone, spawn, worker_command

        with tempfile.TemporaryDirectory(prefix="ptc-probe-") as scratch:
            probe_limits = attrs.evolve(limits, policy=SandboxPolicy.WORKSPACE_WRITE, network=False)
            spec = self.spec(worker_command(limits.python), probe_limits, Path(scratch), ())
            try:
                worker = await asyncio.wait_for(spawn(spec, 1 << 20), timeout=60)
            except ChildGone as gone:
                return Availability(available=False, detail=f"{runsc}: {gone}".strip(": ") or runsc)
            except (OSError, TimeoutError) as error:
                return Availability(available=False, detail=f"{runsc}: {error or 'no answer within 60 s'}")
            with contextlib.suppress(Exception):
                await worker.stop(1.0)
        return Availability(available=True)


GVISOR = GVisor()
