"""What the child does to itself inside bubblewrap before ``ready`` so that the program is never root (ADR 0049).

Runs in the sandbox's own mount namespace, before any program code exists,
driven by one ``--confine=<json>`` argument the host put on the command line.
Standard library only (``ctypes`` for the system calls Python has no wrapper for).

When the host runs as root, bubblewrap hands the child ``CAP_SYS_ADMIN``,
``CAP_SETUID`` and ``CAP_SETGID`` (and nothing else); the child uses them once:

1. the workspace mount is cloned as an *idmapped* mount (no set-id, no
   devices) over itself, mapping the host's root to the program's uid, so the
   program, which is no longer root, still owns what the invoking user owns,
   and what it creates lands on disk owned by the invoking user;
2. kernel interfaces in ``/proc`` (``/proc/sys``, ``sysrq-trigger``, ...) are
   bound read-only over themselves;
3. it drops to the unprivileged uid/gid for good (no supplementary groups);
   every capability goes with the uid change.

Always, root host or not: no new privileges; a Landlock domain scoped so that
the program cannot reach abstract Unix sockets bound outside the sandbox
(the host's D-Bus and the like, reachable when ``network = true`` shares the
host's network namespace; Linux 6.12+, ADR 0088); then a seccomp filter that
refuses what a Python program never needs (:mod:`.syscalls`). A step that
fails raises :class:`ConfinementError`; the child then exits before
``ready`` and the host reports ``sandbox-unavailable``: a half-confined
program never runs.
"""

from __future__ import annotations

import ctypes
import os
import struct
from typing import Any

from . import syscalls

_CLONE_NEWUSER = 0x10000000
_OPEN_TREE_CLONE = 1
_OPEN_TREE_CLOEXEC = 0o2000000
_AT_RECURSIVE = 0x8000
_AT_EMPTY_PATH = 0x1000
_AT_FDCWD = -100
_MOVE_MOUNT_F_EMPTY_PATH = 0x4
_MOUNT_ATTR_NOSUID = 0x2
_MOUNT_ATTR_NODEV = 0x4
_MOUNT_ATTR_IDMAP = 0x100000
_MS_RDONLY = 0x1
_MS_NOSUID = 0x2
_MS_NODEV = 0x4
_MS_NOEXEC = 0x8
_MS_REMOUNT = 0x20
_MS_BIND = 0x1000
_MS_REC = 0x4000
_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_SECCOMP = 22
_SECCOMP_MODE_FILTER = 2
_LINUX_CAPABILITY_VERSION_3 = 0x20080522
_LANDLOCK_CREATE_RULESET_VERSION = 0x1
_LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET = 0x1
LANDLOCK_SCOPE_ABI = 6
"""The first Landlock ABI with scopes (Linux 6.12); an older kernel cannot refuse abstract sockets (ADR 0088)."""

# Kernel interfaces a program has no business writing; uid 65534 cannot write them anyway (ADR 0049).
READ_ONLY_PROC = ("/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus", "/proc/fs")


class ConfinementError(Exception):
    """A confinement step failed; the child must not go on to run a program."""


_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


def apply(settings: dict[str, Any]) -> None:
    """Confine this process as ``settings`` says (keys ``drop``: ``[uid, gid]`` or absent, ``workspace``)."""
    drop = settings.get("drop")
    if drop is not None:
        uid, gid = int(drop[0]), int(drop[1])
        workspace = str(settings["workspace"])
        _idmap_workspace(workspace, host_uid=os.geteuid(), host_gid=os.getegid(), uid=uid, gid=gid)
        for path in READ_ONLY_PROC:
            if os.path.exists(path):
                _bind_read_only(path)
        os.setgroups([])
        os.setresgid(gid, gid, gid)
        os.setresuid(uid, uid, uid)
        if os.geteuid() == 0 or os.getuid() == 0:
            raise ConfinementError("still root after dropping privileges")
        _clear_capabilities()  # the uid change emptied the permitted set, but not the inheritable one
        os.chdir(workspace)  # the old cwd is the mount underneath; only the program's uid owns the new one
    _check(_libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(NO_NEW_PRIVS)")
    # prctl(PR_SET_SECCOMP) filters the calling thread only: a thread started earlier would go unfiltered.
    if len(os.listdir("/proc/self/task")) != 1:
        raise ConfinementError("more than one thread before the seccomp filter")
    scope_abstract_unix_sockets()
    _install_filter(syscalls.filter_program())


def landlock_abi() -> int:
    """The running kernel's Landlock ABI version (0: no Landlock, or disabled at boot)."""
    version = _syscall(
        syscalls.numbers()["landlock_create_ruleset"],
        None,
        ctypes.c_size_t(0),
        ctypes.c_uint(_LANDLOCK_CREATE_RULESET_VERSION),
    )
    return max(version, 0)


def scope_abstract_unix_sockets() -> bool:
    """Refuse this process and its descendants ``connect``/``sendto`` to abstract sockets bound outside (ADR 0088).

    A Landlock domain that handles no file or network access, only the
    abstract-socket scope: sockets the program's own processes bind stay
    reachable to them. Like seccomp, it binds the calling thread (the caller
    checked there is one). Returns whether it was applied: ``False`` on a
    kernel whose Landlock has no scopes, which cannot refuse them (then the
    private network namespace of ``network = false`` is the only fence).
    """
    numbers = syscalls.numbers()
    if landlock_abi() < LANDLOCK_SCOPE_ABI:
        return False
    # struct landlock_ruleset_attr { u64 handled_access_fs, handled_access_net, scoped; }
    attr = struct.pack("=QQQ", 0, 0, _LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET)
    buffer = ctypes.create_string_buffer(attr, len(attr))
    ruleset = _check(
        _syscall(numbers["landlock_create_ruleset"], buffer, ctypes.c_size_t(len(attr)), ctypes.c_uint(0)),
        "landlock_create_ruleset(scope)",
    )
    try:
        _check(
            _syscall(numbers["landlock_restrict_self"], ctypes.c_int(ruleset), ctypes.c_uint(0)),
            "landlock_restrict_self",
        )
    finally:
        os.close(ruleset)
    return True


def _check(result: int, what: str) -> int:
    if result < 0:
        error = ctypes.get_errno()
        raise ConfinementError(f"{what}: {os.strerror(error)}")
    return result


def _syscall(number: int, *args: Any) -> int:
    return int(_libc.syscall(ctypes.c_long(number), *args))


def _idmap_workspace(workspace: str, *, host_uid: int, host_gid: int, uid: int, gid: int) -> None:
    """Mount ``workspace`` (with the read-only binds inside it) over itself, idmapped host → program ids."""
    userns = _mapping_namespace(f"{host_uid} {uid} 1\n", f"{host_gid} {gid} 1\n")
    try:
        numbers = syscalls.numbers()
        tree = _check(
            _syscall(
                numbers["open_tree"],
                ctypes.c_int(_AT_FDCWD),
                workspace.encode(),
                ctypes.c_uint(_OPEN_TREE_CLONE | _OPEN_TREE_CLOEXEC | _AT_RECURSIVE),
            ),
            "open_tree(workspace)",
        )
        try:
            # struct mount_attr { u64 attr_set, attr_clr, propagation, userns_fd; }
            attr = struct.pack("=QQQQ", _MOUNT_ATTR_IDMAP | _MOUNT_ATTR_NOSUID | _MOUNT_ATTR_NODEV, 0, 0, userns)
            buffer = ctypes.create_string_buffer(attr, len(attr))
            _check(
                _syscall(
                    numbers["mount_setattr"],
                    ctypes.c_int(tree),
                    b"",
                    ctypes.c_uint(_AT_EMPTY_PATH | _AT_RECURSIVE),
                    buffer,
                    ctypes.c_size_t(len(attr)),
                ),
                "mount_setattr(idmap)",
            )
            _check(
                _syscall(
                    numbers["move_mount"],
                    ctypes.c_int(tree),
                    b"",
                    ctypes.c_int(_AT_FDCWD),
                    workspace.encode(),
                    ctypes.c_uint(_MOVE_MOUNT_F_EMPTY_PATH),
                ),
                "move_mount(workspace)",
            )
        finally:
            os.close(tree)
    finally:
        os.close(userns)


def _mapping_namespace(uid_map: str, gid_map: str) -> int:
    """A user namespace holding only the id mapping of an idmapped mount (a descriptor; nothing runs in it).

    The kernel reads an idmapped mount's mapping as "inside id → outside id":
    ``<host id> <program id> 1`` makes files the host id owns appear owned by
    the program id, and the program's new files land owned by the host id.
    """
    ready_read, ready_write = os.pipe()
    hold_read, hold_write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the forked child
        try:
            os.close(ready_read)
            os.close(hold_write)
            status = b"+" if _libc.unshare(_CLONE_NEWUSER) == 0 else b"-"
            os.write(ready_write, status)
            os.read(hold_read, 1)
        finally:
            os._exit(0)
    os.close(ready_write)
    os.close(hold_read)
    try:
        if os.read(ready_read, 1) != b"+":
            raise ConfinementError("unshare(CLONE_NEWUSER) failed")
        for name, mapping in (("uid_map", uid_map), ("gid_map", gid_map)):
            with open(f"/proc/{pid}/{name}", "w") as handle:
                handle.write(mapping)
        return os.open(f"/proc/{pid}/ns/user", os.O_RDONLY | os.O_CLOEXEC)
    finally:
        os.close(ready_read)
        os.close(hold_write)
        os.waitpid(pid, 0)


def _clear_capabilities() -> None:
    # struct __user_cap_header_struct { u32 version; int pid; } + two __user_cap_data_struct, all zero
    header = ctypes.create_string_buffer(struct.pack("=Ii", _LINUX_CAPABILITY_VERSION_3, 0), 8)
    data = ctypes.create_string_buffer(bytes(24), 24)
    _check(_libc.capset(header, data), "capset(none)")


def _bind_read_only(path: str) -> None:
    target = path.encode()
    _check(_libc.mount(target, target, None, _MS_BIND | _MS_REC, None), f"bind {path}")
    flags = _MS_BIND | _MS_REMOUNT | _MS_RDONLY | _MS_NOSUID | _MS_NODEV | _MS_NOEXEC
    _check(_libc.mount(None, target, None, flags, None), f"remount {path} read-only")


def _install_filter(program: bytes) -> None:
    count = len(program) // 8
    buffer = ctypes.create_string_buffer(program, len(program))
    # struct sock_fprog { unsigned short len; struct sock_filter *filter; }
    fprog = struct.pack("HxxxxxxP", count, ctypes.addressof(buffer))
    fprog_buffer = ctypes.create_string_buffer(fprog, len(fprog))
    _check(_libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, fprog_buffer, 0, 0), "prctl(SECCOMP)")
