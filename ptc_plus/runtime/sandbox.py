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

The program is never root (ADR 0049). When the host runs as root, bubblewrap
lends the child three capabilities and the child, before ``ready``, idmaps
the workspace, makes kernel interfaces in ``/proc`` read-only and drops to
:data:`SANDBOX_UID`/:data:`SANDBOX_GID` (``worker/confine.py``); as any user,
it then sets no-new-privileges and loads the seccomp filter
(``worker/syscalls.py``). The probe runs that whole sequence once, so a
machine where any step fails reports ``sandbox-unavailable`` up front.
"""

from __future__ import annotations

import asyncio
import atexit
import functools
import os
import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

import attrs
import orjson

from ptc_plus.runtime.run_limits import RunLimits
from ptc_plus.runtime.worker.main import CONFINE_FLAG
from ptc_plus.sandbox_policy import SandboxPolicy

SANDBOX_RUNTIME_DIR = "/ptc-runtime"
"""Where the ``worker`` package appears inside the sandbox."""

SANDBOX_UID = SANDBOX_GID = 65534
"""Who the program is on the host when the host runs as root: ``nobody`` (ADR 0049)."""

_ROOT_CAPABILITIES = ("CAP_SYS_ADMIN", "CAP_SETUID", "CAP_SETGID")
"""Lent to the child of a root host only until it has idmapped the workspace and dropped to the sandbox uid."""

_MERGED_USR = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
_NETWORK_FILES = ("/etc/resolv.conf", "/etc/hosts", "/etc/nsswitch.conf", "/etc/ssl", "/etc/ca-certificates")
_BASE_FILES = ("/etc/ld.so.cache", "/etc/localtime")
SANDBOX_USER = "sandbox"
"""The name ``/etc/passwd`` and ``/etc/group`` give the program's uid and gid inside the sandbox."""


@attrs.frozen(kw_only=True)
class Availability:
    available: bool
    detail: str = ""


_probed: dict[tuple[str, str], Availability] = {}

_PROBE_PROGRAM = (
    "import json, sys; sys.path.append(sys.argv[1]); from worker import confine; "
    f"confine.apply(json.loads(sys.argv[2][len({CONFINE_FLAG!r}):])); open('probe', 'w').close()"
)


def _default_python() -> str:
    return os.path.realpath(sys.executable)


async def probe(bwrap: str, python: str | None = None) -> Availability:
    """Whether ``bwrap`` can confine ``python`` here, every step of ADR 0049 included (cached per pair).

    Runs the real confinement once in a scratch workspace and checks that the
    program's file landed owned by the invoking user.
    """
    key = (bwrap, python or _default_python())
    cached = _probed.get(key)
    if cached is not None:
        return cached
    if not os.path.isfile(bwrap) or not os.access(bwrap, os.X_OK):
        result = Availability(available=False, detail=f"{bwrap} not found or not executable")
    else:
        result = await _try(bwrap, key[1])
    _probed[key] = result
    return result


async def _try(bwrap: str, python: str) -> Availability:
    with tempfile.TemporaryDirectory(prefix="ptc-probe-") as scratch:
        workspace = Path(scratch)
        runtime_dir = Path(__file__).resolve().parent
        limits = RunLimits(policy=SandboxPolicy.WORKSPACE_WRITE, bwrap_path=bwrap, python=python)
        command = [python, "-I", "-S", "-c", _PROBE_PROGRAM, str(runtime_dir)]
        argv = confine(command, limits, workspace, runtime_dir)
        try:
            process = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.DEVNULL,
                stderr=asyncio.subprocess.PIPE,
                cwd=workspace,
                env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"},
            )
            _, err = await asyncio.wait_for(process.communicate(), timeout=30)
        except (OSError, TimeoutError) as error:
            return Availability(available=False, detail=f"{bwrap}: {error}")
        if process.returncode != 0:
            return Availability(available=False, detail=err.decode("utf-8", "replace").strip()[-500:])
        written = workspace / "probe"
        if not written.is_file() or written.stat().st_uid != os.geteuid():
            return Availability(available=False, detail="files written in the sandbox are not owned by the host user")
    return Availability(available=True)


def known_available(bwrap: str, python: str | None = None) -> bool:
    """Whether an earlier :func:`probe` of ``bwrap`` (with ``python``) succeeded (never probes itself)."""
    cached = _probed.get((bwrap, python or _default_python()))
    return cached is not None and cached.available


def python_prefix(python: str) -> str:
    """The installation directory holding interpreter ``python`` (``<prefix>/bin/python``)."""
    return str(Path(python).resolve().parent.parent)


def confine(
    command: list[str],
    limits: RunLimits,
    workspace: Path,
    runtime_dir: Path,
    protected: Sequence[Path] = (),
    *,
    host_is_root: bool | None = None,
) -> list[str]:
    """``command`` wrapped in ``bwrap`` for ``limits.policy`` (unchanged for ``danger-full-access``).

    ``runtime_dir`` is bound read-only at :data:`SANDBOX_RUNTIME_DIR`; a
    command argument equal to ``str(runtime_dir)`` is rewritten to it.
    Each of ``protected`` (existing paths inside the workspace, see
    :mod:`ptc_plus.runtime.protected`) is bound read-only over the workspace
    bind, so neither its contents nor the mount point itself can be changed;
    under ``workspace-write`` each directory between the workspace and a
    protected path is bound over itself, so that it cannot be renamed away.
    The private ``/tmp`` is a tmpfs of at most ``limits.tmp_bytes``.
    ``host_is_root`` (default: whether this process is) decides whether the
    child drops to :data:`SANDBOX_UID` itself (ADR 0049).
    """
    policy = limits.policy
    if not policy.confined:
        return command
    ws = str(workspace)
    argv = [limits.bwrap_path, "--ro-bind", "/usr", "/usr"]
    made = {"/usr"}
    for path in _MERGED_USR:
        if os.path.islink(path):
            argv += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            argv += ["--ro-bind", path, path]
    for path in _BASE_FILES + (_NETWORK_FILES if limits.network else ()):
        argv += [*_traversable_parents(path, made), "--ro-bind-try", path, path]
    root = os.geteuid() == 0 if host_is_root is None else host_is_root
    uid, gid = (SANDBOX_UID, SANDBOX_GID) if root else (os.getuid(), os.getgid())
    for path, source in identity_files(uid, gid):
        argv += [*_traversable_parents(path, made), "--ro-bind", source, path]
    prefix = python_prefix(limits.python)
    if not prefix.startswith("/usr/"):
        argv += [*_traversable_parents(prefix, made), "--ro-bind", prefix, prefix]
        # The worker runs with -S: third-party packages installed into the interpreter are none of the program's.
        for hidden in site_packages(prefix):
            argv += ["--perms", "0555", "--tmpfs", hidden]
    argv += ["--dev", "/dev", "--proc", "/proc"]
    if policy is SandboxPolicy.WORKSPACE_WRITE:
        # The program is not root: its private /tmp must be writable by anyone (sticky, like the host's).
        argv += ["--perms", "1777", "--size", str(limits.tmp_bytes), "--tmpfs", "/tmp"]
        made.add("/tmp")
        argv += [*_traversable_parents(ws, made), "--bind", ws, ws]
    else:
        argv += [*_traversable_parents(ws, made), "--ro-bind", ws, ws]
    if policy is SandboxPolicy.WORKSPACE_WRITE:
        # A mount point can be neither renamed nor removed: each directory between the workspace and a protected
        # path, bound over itself (still writable), keeps the program from carrying the path away by its parent.
        for parent in sorted({str(p) for path in protected for p in path.parents if workspace in p.parents}):
            argv += ["--bind", parent, parent]
    for protected_path in protected:
        argv += ["--ro-bind", str(protected_path), str(protected_path)]
    worker_target = f"{SANDBOX_RUNTIME_DIR}/worker"
    argv += [*_traversable_parents(worker_target, made), "--ro-bind", str(runtime_dir / "worker"), worker_target]
    argv += ["--remount-ro", "/", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
    if not limits.network:
        argv += ["--unshare-net"]
    argv += ["--die-with-parent", "--cap-drop", "ALL"]
    settings: dict[str, object] = {}
    if root:
        for capability in _ROOT_CAPABILITIES:
            argv += ["--cap-add", capability]
        settings = {"drop": [SANDBOX_UID, SANDBOX_GID], "workspace": ws}
    argv += ["--chdir", ws, "--"]
    inner = [SANDBOX_RUNTIME_DIR if arg == str(runtime_dir) else arg for arg in command]
    return [*argv, *inner, CONFINE_FLAG + orjson.dumps(settings).decode()]


def identity_files(uid: int, gid: int) -> tuple[tuple[str, str], ...]:
    """``(path in the sandbox, host file)`` for a minimal ``/etc/passwd`` and ``/etc/group`` naming only the
    program's uid and gid (:data:`SANDBOX_USER`), so ``pwd.getpwuid(os.getuid())`` and ``getpass.getuser()``
    answer as library code expects; nothing of the host's own account files is shown.

    Written once per process into a private directory only this process can change (recreated if it went
    away, e.g. a cleaner emptied ``/tmp``); readable by all, as the program runs as another uid.
    """
    directory = _identity_directory(uid, gid)
    passwd, group = directory / "passwd", directory / "group"
    if not (passwd.is_file() and group.is_file()):
        _identity_directory.cache_clear()
        directory = _identity_directory(uid, gid)
        passwd, group = directory / "passwd", directory / "group"
    return (("/etc/passwd", str(passwd)), ("/etc/group", str(group)))


@functools.cache
def _identity_directory(uid: int, gid: int) -> Path:
    directory = Path(tempfile.mkdtemp(prefix="ptc-identity-"))
    # Removed when this process exits, so that every invocation does not leave one behind in /tmp.
    atexit.register(shutil.rmtree, directory, ignore_errors=True)
    (directory / "passwd").write_text(f"{SANDBOX_USER}:x:{uid}:{gid}:PTC Plus sandbox:/nonexistent:/usr/sbin/nologin\n")
    (directory / "group").write_text(f"{SANDBOX_USER}:x:{gid}:\n")
    for path in (directory / "passwd", directory / "group"):
        path.chmod(0o644)
    directory.chmod(0o755)  # written before it is opened to others: nobody else can change it
    return directory


@functools.cache
def site_packages(prefix: str) -> tuple[str, ...]:
    """``prefix``'s ``site-packages`` directories (looked up once: :func:`confine` runs for every run)."""
    return tuple(str(path) for path in sorted(Path(prefix).glob("lib/python3*/site-packages")))


def _traversable_parents(path: str, made: set[str]) -> list[str]:
    """Arguments creating ``path``'s parents as ``0755`` directories (bubblewrap would make them ``0700``).

    The program runs as another uid than whoever made the bind sources, so a
    ``0700`` parent created by bubblewrap (``/root`` above a pyenv Python, a
    private ``/tmp/pytest-of-root``, ``/etc``) would lock it out of its own
    interpreter or workspace. Only names are revealed, never contents.
    ``made`` holds directories already created or mounted; it is updated.
    """
    arguments: list[str] = []
    for parent in reversed(Path(path).parents):
        name = str(parent)
        if name != "/" and name not in made:
            made.add(name)
            arguments += ["--perms", "0755", "--dir", name]
    return arguments
