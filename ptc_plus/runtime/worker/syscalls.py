"""The seccomp filter of a confined program: what it refuses and the classic-BPF program that does it (ADR 0049).

Standard library only. The filter is a deny list on top of the namespaces,
the unprivileged uid and no-new-privileges: each entry is a kernel surface a
Python program never needs and an attacker often does. Refused calls fail
with ``EPERM``; ``clone3`` and ``openat2`` fail with ``ENOSYS`` so the C
library falls back to ``clone``/``openat``, whose arguments a filter can see.
Calls that take a file mode fail when it asks for set-user-ID or
set-group-ID bits; ``clone`` fails when it asks for a new namespace. A
foreign system-call ABI (x32, or another architecture) kills the process.
"""

from __future__ import annotations

import errno
import os
import struct

# Shared by every architecture (the numbers from 403 up are the same everywhere).
_COMMON = {
    "io_uring_setup": 425,
    "io_uring_enter": 426,
    "io_uring_register": 427,
    "open_tree": 428,
    "move_mount": 429,
    "fsopen": 430,
    "fsconfig": 431,
    "fsmount": 432,
    "fspick": 433,
    "clone3": 435,
    "openat2": 437,
    "pidfd_getfd": 438,
    "mount_setattr": 442,
    "landlock_create_ruleset": 444,
    "landlock_restrict_self": 446,
    "quotactl_fd": 443,
    "fchmodat2": 452,
    "statmount": 457,
    "listmount": 458,
    "setxattrat": 463,
    "open_tree_attr": 467,
}

_X86_64 = {
    "open": 2,
    "clone": 56,
    "creat": 85,
    "chmod": 90,
    "fchmod": 91,
    "ptrace": 101,
    "syslog": 103,
    "mknod": 133,
    "uselib": 134,
    "vhangup": 153,
    "pivot_root": 155,
    "_sysctl": 156,
    "chroot": 161,
    "acct": 163,
    "mount": 165,
    "umount2": 166,
    "swapon": 167,
    "swapoff": 168,
    "reboot": 169,
    "sethostname": 170,
    "setdomainname": 171,
    "iopl": 172,
    "ioperm": 173,
    "init_module": 175,
    "delete_module": 176,
    "quotactl": 179,
    "nfsservctl": 180,
    "setxattr": 188,
    "lsetxattr": 189,
    "fsetxattr": 190,
    "lookup_dcookie": 212,
    "kexec_load": 246,
    "add_key": 248,
    "request_key": 249,
    "keyctl": 250,
    "openat": 257,
    "mknodat": 259,
    "fchmodat": 268,
    "unshare": 272,
    "perf_event_open": 298,
    "fanotify_init": 300,
    "name_to_handle_at": 303,
    "open_by_handle_at": 304,
    "setns": 308,
    "process_vm_readv": 310,
    "process_vm_writev": 311,
    "kcmp": 312,
    "finit_module": 313,
    "kexec_file_load": 320,
    "bpf": 321,
    "userfaultfd": 323,
    **_COMMON,
}

# aarch64 uses the generic table: no open/creat/chmod/mknod, only their *at forms.
_AARCH64 = {
    "setxattr": 5,
    "lsetxattr": 6,
    "fsetxattr": 7,
    "lookup_dcookie": 18,
    "mknodat": 33,
    "umount2": 39,
    "mount": 40,
    "pivot_root": 41,
    "nfsservctl": 42,
    "chroot": 51,
    "fchmod": 52,
    "fchmodat": 53,
    "openat": 56,
    "vhangup": 58,
    "quotactl": 60,
    "acct": 89,
    "unshare": 97,
    "kexec_load": 104,
    "init_module": 105,
    "delete_module": 106,
    "syslog": 116,
    "ptrace": 117,
    "reboot": 142,
    "sethostname": 161,
    "setdomainname": 162,
    "add_key": 217,
    "request_key": 218,
    "keyctl": 219,
    "clone": 220,
    "swapon": 224,
    "swapoff": 225,
    "perf_event_open": 241,
    "fanotify_init": 262,
    "name_to_handle_at": 264,
    "open_by_handle_at": 265,
    "setns": 268,
    "process_vm_readv": 270,
    "process_vm_writev": 271,
    "kcmp": 272,
    "finit_module": 273,
    "bpf": 280,
    "userfaultfd": 282,
    "kexec_file_load": 294,
    **_COMMON,
}

_AUDIT_ARCH = {"x86_64": (0xC000003E, _X86_64), "aarch64": (0xC00000B7, _AARCH64)}

REFUSED = (
    # keyrings: the host's keys are not the program's, and a planted key outlives the run
    "add_key",
    "request_key",
    "keyctl",
    # other processes' memory and descriptors
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "kcmp",
    "pidfd_getfd",
    # mounts and namespaces (bubblewrap has built the sandbox already)
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "open_tree",
    "open_tree_attr",
    "move_mount",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "mount_setattr",
    "statmount",
    "listmount",
    "unshare",
    "setns",
    # the kernel itself
    "init_module",
    "finit_module",
    "delete_module",
    "kexec_load",
    "kexec_file_load",
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "syslog",
    "reboot",
    "swapon",
    "swapoff",
    "acct",
    "quotactl",
    "quotactl_fd",
    "sethostname",
    "setdomainname",
    "iopl",
    "ioperm",
    "uselib",
    "_sysctl",
    "nfsservctl",
    "lookup_dcookie",
    "vhangup",
    "fanotify_init",
    "name_to_handle_at",
    "open_by_handle_at",
    # extended attributes carry file capabilities (security.capability)
    "setxattr",
    "lsetxattr",
    "fsetxattr",
    "setxattrat",
)

UNSUPPORTED = ("clone3", "openat2")
"""Refused with ``ENOSYS``: the C library then uses ``clone``/``openat``, which the filter can inspect."""

SET_ID_BITS = 0o6000
MODE_ARGUMENT = {"chmod": 1, "fchmod": 1, "fchmodat": 2, "fchmodat2": 2, "creat": 1, "open": 2, "openat": 3}
MODE_ARGUMENT |= {"mknod": 1, "mknodat": 2}
"""Index of the ``mode`` argument of each call that can set the set-id bits of a file."""

NAMESPACE_FLAGS = 0x7E020080
"""``CLONE_NEW{NS,CGROUP,UTS,IPC,USER,PID,NET,TIME}``: ``clone`` may not make a namespace either."""

_X32_BIT = 0x40000000
_RET_ALLOW = 0x7FFF0000
_RET_ERRNO = 0x00050000
_RET_KILL_PROCESS = 0x80000000
_LD_ABS_W = 0x20
_JEQ = 0x15
_JGE = 0x35
_JSET = 0x45
_RET = 0x06
_NR_OFFSET = 0
_ARCH_OFFSET = 4


class UnsupportedArchitecture(Exception):
    pass


def numbers(machine: str | None = None) -> dict[str, int]:
    """System-call numbers of ``machine`` (default: this one) that the filter knows."""
    return _table(machine)[1]


def _table(machine: str | None) -> tuple[int, dict[str, int]]:
    machine = machine or os.uname().machine
    try:
        return _AUDIT_ARCH[machine]
    except KeyError:
        raise UnsupportedArchitecture(f"no seccomp table for {machine}") from None


def _op(code: int, jt: int, jf: int, k: int) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def _argument_low_word(index: int) -> int:
    # struct seccomp_data: nr (4), arch (4), instruction_pointer (8), args[6] (8 each); little-endian low word first
    return 16 + 8 * index


def filter_program(machine: str | None = None) -> bytes:
    """The classic-BPF program (``struct sock_filter[]``) for ``machine`` (default: this one).

    After the architecture check, a binary search over the listed call
    numbers decides: an unlisted call (every call a program makes in normal
    work) is allowed after about ``log2(listed)`` comparisons, not a walk
    through the whole list; a listed one runs its own small block.
    """
    machine = machine or os.uname().machine
    audit_arch, table = _table(machine)
    deny_eperm = _RET_ERRNO | errno.EPERM
    actions: dict[int, list[bytes]] = {}
    for name in REFUSED:
        if name in table:
            actions[table[name]] = [_op(_RET, 0, 0, deny_eperm)]
    for name in UNSUPPORTED:
        actions[table[name]] = [_op(_RET, 0, 0, _RET_ERRNO | errno.ENOSYS)]
    guarded = [(name, index, SET_ID_BITS) for name, index in MODE_ARGUMENT.items() if name in table]
    for name, index, bits in [*guarded, ("clone", 0, NAMESPACE_FLAGS)]:
        # Refused when any of ``bits`` is set in the argument, else allowed.
        actions[table[name]] = [
            _op(_LD_ABS_W, 0, 0, _argument_low_word(index)),
            _op(_JSET, 0, 1, bits),
            _op(_RET, 0, 0, deny_eperm),
            _op(_RET, 0, 0, _RET_ALLOW),
        ]
    ops = [
        _op(_LD_ABS_W, 0, 0, _ARCH_OFFSET),
        _op(_JEQ, 1, 0, audit_arch),
        _op(_RET, 0, 0, _RET_KILL_PROCESS),
        _op(_LD_ABS_W, 0, 0, _NR_OFFSET),
    ]
    if machine == "x86_64":
        ops += [_op(_JGE, 0, 1, _X32_BIT), _op(_RET, 0, 0, _RET_KILL_PROCESS)]
    ops += _search(sorted(actions), actions)
    return b"".join(ops)


_LINEAR_AT_MOST = 3


def _search(numbers: list[int], actions: dict[int, list[bytes]]) -> list[bytes]:
    """Decide for the call number in the accumulator among ``numbers`` (sorted); anything else is allowed."""
    if len(numbers) <= _LINEAR_AT_MOST:
        ops: list[bytes] = []
        for number in numbers:
            block = actions[number]
            ops += [_op(_JEQ, 0, len(block), number), *block]
        return [*ops, _op(_RET, 0, 0, _RET_ALLOW)]
    middle = len(numbers) // 2
    below = _search(numbers[:middle], actions)
    above = _search(numbers[middle:], actions)
    if len(below) > 255:
        raise ValueError("seccomp filter too large for an 8-bit jump")  # a longer list needs another layout
    return [_op(_JGE, len(below), 0, numbers[middle]), *below, *above]
