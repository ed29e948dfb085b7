"""Host-side checks that nothing a hostile program did escaped its run.

:class:`HostGuard` takes a snapshot of everything on the host a program
could try to reach — bait files outside the workspace, kernel settings,
root's keys, marker-named files in the host's shared directories, host
files visible inside the sandbox — and after each run reports every
difference, plus processes left running, setuid/setgid files or file
capabilities in the workspace and the host's own memory growth.
:meth:`HostGuard.repair` undoes what it can (restores kernel settings,
kills strays, strips set-id bits, revokes keys) so one escape does not
leak into the next test or onto the machine.

Every check here is tested against a real, host-made violation in
``test_guard.py``: a check that cannot fail would be a defect.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import hashlib
import os
import signal
import stat
import time
from collections.abc import Iterable
from pathlib import Path

import attrs

MIB = 1024 * 1024

SYSCTLS = (
    "kernel/core_pattern",
    "kernel/core_uses_pid",
    "kernel/poweroff_cmd",
    "kernel/randomize_va_space",
    "kernel/kptr_restrict",
    "kernel/dmesg_restrict",
    "kernel/perf_event_paranoid",
    "kernel/unprivileged_bpf_disabled",
    "kernel/io_uring_disabled",
    "kernel/hostname",
    "kernel/domainname",
    "kernel/sysrq",
    "kernel/panic",
    "kernel/printk",
    "fs/protected_hardlinks",
    "fs/protected_symlinks",
    "vm/swappiness",
    "vm/overcommit_memory",
)
"""``/proc/sys`` settings read on the host before and after every run (missing ones are skipped)."""

SHARED_DIRS = (Path("/tmp"), Path("/var/tmp"), Path("/dev/shm"), Path("/root"), Path("/etc"), Path("/"))
"""Host directories where no file named after the test's marker may appear."""

VISIBLE_HOST_FILES = (Path("/etc/ld.so.cache"), Path("/etc/localtime"), Path("/usr/bin/env"))
"""Host files the sandbox can see: their link count, mode and owner must not change (hard links, chmod)."""

# keyctl(2) and add_key(2), x86_64 and the generic table (aarch64).
_SYSCALLS = {"x86_64": {"add_key": 248, "keyctl": 250}, "aarch64": {"add_key": 217, "keyctl": 219}}
KEY_SPEC_USER_KEYRING = -4
KEYCTL_REVOKE = 3
KEYCTL_UNLINK = 9
KEYCTL_INVALIDATE = 21

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


def _syscall_number(name: str) -> int:
    return _SYSCALLS[os.uname().machine][name]


def add_host_key(description: str, payload: bytes, keyring: int = KEY_SPEC_USER_KEYRING) -> int:
    """Add a ``user`` key to one of *this* (host) process's keyrings; its serial number."""
    serial = _libc.syscall(
        ctypes.c_long(_syscall_number("add_key")),
        b"user",
        description.encode(),
        payload,
        ctypes.c_size_t(len(payload)),
        ctypes.c_int(keyring),
    )
    if serial < 0:
        error = ctypes.get_errno()
        raise OSError(error, os.strerror(error), "add_key")
    return int(serial)


def remove_host_key(serial: int) -> None:
    """Invalidate (or at least revoke and unlink) key ``serial``; quiet when it is already gone."""
    number = ctypes.c_long(_syscall_number("keyctl"))
    if _libc.syscall(number, ctypes.c_long(KEYCTL_INVALIDATE), ctypes.c_long(serial)) < 0:
        _libc.syscall(number, ctypes.c_long(KEYCTL_REVOKE), ctypes.c_long(serial))
        _libc.syscall(number, ctypes.c_long(KEYCTL_UNLINK), ctypes.c_long(serial), ctypes.c_long(KEY_SPEC_USER_KEYRING))


def keys_with(marker: str) -> dict[int, str]:
    """Live keys the host (root) can see whose ``/proc/keys`` line mentions ``marker``: serial -> line.

    Revoked (``R``), dead (``D``) and invalidated (``i``) keys are skipped: they are gone, only not yet
    collected.
    """
    found: dict[int, str] = {}
    with contextlib.suppress(OSError), open("/proc/keys") as handle:
        for line in handle:
            fields = line.split()
            if marker in line and not set(fields[1]) & {"R", "D", "i"}:
                found[int(fields[0], 16)] = line.strip()
    return found


def read_sysctls() -> dict[str, str]:
    values: dict[str, str] = {}
    for name in SYSCTLS:
        with contextlib.suppress(OSError):
            values[name] = Path("/proc/sys", name).read_text()
    return values


def write_sysctl(name: str, value: str) -> None:
    Path("/proc/sys", name).write_text(value)


@attrs.frozen
class Entry:
    """One path under a watched tree: what it is, its mode, owner and content digest (or link target)."""

    kind: str
    mode: int
    uid: int
    size: int
    digest: str


def tree(root: Path) -> dict[str, Entry]:
    """Every path under ``root`` (``root`` itself included), never following symlinks."""
    entries: dict[str, Entry] = {}
    if not os.path.lexists(root):
        return entries
    pending = [root]
    while pending:
        path = pending.pop()
        try:
            info = path.lstat()
        except FileNotFoundError:
            continue
        digest = ""
        if stat.S_ISLNK(info.st_mode):
            kind, digest = "link", os.readlink(path)
        elif stat.S_ISDIR(info.st_mode):
            kind = "dir"
            pending.extend(path.iterdir())
        elif stat.S_ISREG(info.st_mode):
            kind = "file"
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
        else:
            kind = "special"
        entries[str(path.relative_to(root))] = Entry(
            kind=kind, mode=info.st_mode, uid=info.st_uid, size=info.st_size, digest=digest
        )
    return entries


def set_id_files(root: Path) -> list[str]:
    """Paths under ``root`` (not followed through symlinks) with a setuid/setgid bit or file capabilities."""
    found: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            try:
                info = os.lstat(path)
            except FileNotFoundError:
                continue
            if stat.S_ISLNK(info.st_mode):
                continue
            if info.st_mode & (stat.S_ISUID | stat.S_ISGID):
                found.append(f"{path} mode {stat.filemode(info.st_mode)} uid {info.st_uid}")
            with contextlib.suppress(OSError):
                os.getxattr(path, "security.capability", follow_symlinks=False)
                found.append(f"{path} carries file capabilities (security.capability)")
    return found


def strip_set_id(root: Path) -> None:
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            with contextlib.suppress(OSError):
                info = os.lstat(path)
                if not stat.S_ISLNK(info.st_mode):
                    os.chmod(path, stat.S_IMODE(info.st_mode) & ~(stat.S_ISUID | stat.S_ISGID))
                    os.removexattr(path, "security.capability", follow_symlinks=False)


def _state(pid: str) -> str:
    with open(f"/proc/{pid}/stat", "rb") as handle:
        return handle.read().rsplit(b")", 1)[1].split()[0].decode()


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def stray_processes(markers: Iterable[str], roots: Iterable[Path], exclude: Iterable[int] = ()) -> dict[int, str]:
    """Live (not zombie) processes carrying a marker in their command line or environment, or whose
    working directory lies under one of ``roots``: pid -> why."""
    needles = [marker.encode() for marker in markers]
    root_names = [str(root) for root in roots]
    skip = {os.getpid(), *exclude}
    found: dict[int, str] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) in skip:
            continue
        try:
            if _state(entry) in ("Z", "X"):
                continue
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                cmdline = handle.read()
            why = ""
            if any(needle in cmdline for needle in needles):
                why = "marker in its command line"
            else:
                with contextlib.suppress(OSError), open(f"/proc/{entry}/environ", "rb") as handle:
                    if any(needle in handle.read() for needle in needles):
                        why = "marker in its environment"
            if not why:
                with contextlib.suppress(OSError):
                    cwd = os.readlink(f"/proc/{entry}/cwd")
                    if any(_inside(cwd, root) for root in root_names):
                        why = f"working directory {cwd}"
        except (OSError, IndexError):
            continue
        if why:
            command = cmdline.replace(b"\0", b" ").decode(errors="replace")[:200]
            found[int(entry)] = f"{why}: {command}"
    return found


def memory_kib(field: str) -> int:
    with open("/proc/self/status") as handle:
        for line in handle:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise LookupError(field)


def release_free_memory() -> None:
    """Hand freed memory back to the system, so that the resident set is an honest baseline.

    Without this, memory an earlier test freed but the allocator kept would
    count in the baseline, and a later run could reuse it unseen.
    """
    gc.collect()
    with contextlib.suppress(AttributeError):
        _libc.malloc_trim(ctypes.c_size_t(0))


def reset_peak_memory() -> None:
    """Make ``VmHWM`` (peak resident set) start again from the current resident set (Linux ≥ 4.0)."""
    with open("/proc/self/clear_refs", "w") as handle:
        handle.write("5")


class HostGuard:
    """Snapshot before a run, differences after it, and repairs.

    ``marker`` names everything the test's programs create on purpose (files,
    keys, processes); ``workspace`` is where the program may write;
    ``outside`` is a bait tree next to it that must never change; ``scope``
    is the test's own temporary directory (a process whose working directory
    is under it belongs to the test).
    """

    def __init__(self, *, marker: str, workspace: Path, outside: Path, scope: Path) -> None:
        self.marker = marker
        self.workspace = workspace
        self.outside = outside
        self.scope = scope
        self.exclude_pids: set[int] = set()
        self._outside: dict[str, Entry] = {}
        self._beside: set[str] = set()
        self._sysctls: dict[str, str] = {}
        self._shared: dict[str, set[str]] = {}
        self._visible: dict[str, tuple[int, int, int]] = {}
        self._rss_kib = 0

    def snapshot(self) -> None:
        self._outside = tree(self.outside)
        self._beside = self._siblings()
        self._sysctls = read_sysctls()
        self._shared = {str(directory): self._marked(directory) for directory in SHARED_DIRS}
        self._visible = {str(path): self._identity(path) for path in VISIBLE_HOST_FILES if path.exists()}
        release_free_memory()
        self._rss_kib = memory_kib("VmRSS")
        reset_peak_memory()

    def _siblings(self) -> set[str]:
        """Names next to the workspace (in its parent directory): a ``../x`` write would land there."""
        return set(os.listdir(self.workspace.parent))

    def _marked(self, directory: Path) -> set[str]:
        try:
            return {name for name in os.listdir(directory) if self.marker in name}
        except OSError:
            return set()

    @staticmethod
    def _identity(path: Path) -> tuple[int, int, int]:
        info = path.stat()
        return info.st_nlink, info.st_mode, info.st_uid

    def host_memory_growth(self) -> int:
        """Bytes the host's peak resident set rose above its resident set at :meth:`snapshot`."""
        return (memory_kib("VmHWM") - self._rss_kib) * 1024

    def violations(self, memory_bound: int, settle_s: float = 2.0) -> list[str]:
        """Everything that escaped since :meth:`snapshot` (empty: nothing did).

        Processes get ``settle_s`` to finish dying (SIGKILL is delivered
        asynchronously); anything alive after that is reported.
        """
        found: list[str] = []
        after = tree(self.outside)
        for name in sorted(set(self._outside) | set(after)):
            if self._outside.get(name) != after.get(name):
                found.append(
                    f"bait tree changed at {self.outside / name}: {self._outside.get(name)} -> {after.get(name)}"
                )
        beside = self._siblings() - self._beside
        if beside:
            found.append(f"new files next to the workspace in {self.workspace.parent}: {sorted(beside)}")
        sysctls = read_sysctls()
        for name, value in self._sysctls.items():
            if sysctls.get(name) != value:
                found.append(f"kernel setting {name} changed: {value!r} -> {sysctls.get(name)!r}")
        for directory, names in self._shared.items():
            new = self._marked(Path(directory)) - names
            if new:
                found.append(f"new marker files on the host in {directory}: {sorted(new)}")
        for path, identity in self._visible.items():
            now = self._identity(Path(path))
            if now != identity:
                found.append(f"host file {path} changed (nlink, mode, uid): {identity} -> {now}")
        keys = keys_with(self.marker)
        if keys:
            found.append(f"marker keys left in the host's keyrings: {sorted(keys.values())}")
        strays = self._strays(settle_s)
        if strays:
            found.append(f"processes left running after the run: {strays}")
        set_id = set_id_files(self.workspace)
        if set_id:
            found.append(f"setuid/setgid/capability files in the workspace: {set_id}")
        growth = self.host_memory_growth()
        if growth > memory_bound:
            found.append(f"host peak memory grew by {growth // MIB} MiB (bound {memory_bound // MIB} MiB)")
        return found

    def _strays(self, settle_s: float) -> dict[int, str]:
        deadline = time.monotonic() + settle_s
        while True:
            strays = stray_processes([self.marker], [self.scope], self.exclude_pids)
            if not strays or time.monotonic() >= deadline:
                return strays
            time.sleep(0.05)

    def repair(self) -> None:
        """Undo what escaped, as far as the host can: never leave a test's escape on the machine."""
        sysctls = read_sysctls()
        for name, value in self._sysctls.items():
            if sysctls.get(name) != value:
                with contextlib.suppress(OSError):
                    write_sysctl(name, value)
        for pid in stray_processes([self.marker], [self.scope], self.exclude_pids):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        for serial in keys_with(self.marker):
            remove_host_key(serial)
        strip_set_id(self.workspace)
        for directory, names in self._shared.items():
            for name in self._marked(Path(directory)) - names:
                path = Path(directory, name)
                with contextlib.suppress(OSError):
                    if path.is_dir() and not path.is_symlink():
                        for child in sorted(path.rglob("*"), reverse=True):
                            child.unlink() if not child.is_dir() or child.is_symlink() else child.rmdir()
                        path.rmdir()
                    else:
                        path.unlink()
