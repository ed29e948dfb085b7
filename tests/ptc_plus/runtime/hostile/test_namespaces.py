"""Namespaces, mounts and the kernel surfaces the seccomp filter refuses (ADR 0049).

Each system call is made with arguments the kernel itself would answer
differently (a bad descriptor, an empty attribute block: ``EBADF``,
``EINVAL``, ``ENOSYS`` on a kernel without modules, or success), so
``EPERM`` shows the filter refused it before the kernel looked. For
``mount``, ``chroot``, ``pivot_root``, ``swapon``, ``acct`` and ``setns`` the
missing capabilities answer ``EPERM`` too: there the filter is a second layer
and these tests check the outcome, not which layer gave it.
"""

from __future__ import annotations

import pytest

from .conftest import NR, REFUSED_BY_FILTER, Hostile, needs_syscall_numbers

pytestmark = [pytest.mark.needs_bwrap, needs_syscall_numbers]

CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
CLONE_NEWNET = 0x40000000
CLONE_NEWPID = 0x20000000
SIGCHLD = 17


def _nr(name: str) -> int:
    return NR.get(name, -1)


FILTERED = {
    "unshare_user": f"sys_call({_nr('unshare')}, ctypes.c_long({CLONE_NEWUSER}))",
    "unshare_mount": f"sys_call({_nr('unshare')}, ctypes.c_long({CLONE_NEWNS}))",
    "unshare_net": f"sys_call({_nr('unshare')}, ctypes.c_long({CLONE_NEWNET}))",
    "setns_own_net": f"sys_call({_nr('setns')}, os.open('/proc/self/ns/net', os.O_RDONLY), ctypes.c_int(0))",
    "setns_init_mnt": f"sys_call({_nr('setns')}, os.open('/proc/1/ns/mnt', os.O_RDONLY), ctypes.c_int(0))"
    " if os.access('/proc/1/ns/mnt', os.R_OK) else 'EPERM'",
    "mount_tmpfs": f"sys_call({_nr('mount')}, b'none', b'/tmp', b'tmpfs', ctypes.c_ulong(0), None)",
    "mount_proc": f"sys_call({_nr('mount')}, b'proc', b'/tmp', b'proc', ctypes.c_ulong(0), None)",
    "umount_protected": f"sys_call({_nr('umount2')}, (WORKSPACE + '/.ptc-plus').encode(), ctypes.c_int(2))",
    "umount_workspace": f"sys_call({_nr('umount2')}, WORKSPACE.encode(), ctypes.c_int(2))",
    "pivot_root": f"sys_call({_nr('pivot_root')}, b'/tmp', b'/tmp')",
    "chroot": f"sys_call({_nr('chroot')}, b'/tmp')",
    "open_tree": f"sys_call({_nr('open_tree')}, ctypes.c_int(-100), b'/tmp', ctypes.c_uint(1))",
    "fsopen": f"sys_call({_nr('fsopen')}, b'tmpfs', ctypes.c_uint(0))",
    "init_module": f"sys_call({_nr('init_module')}, None, ctypes.c_ulong(0), b'')",
    "finit_module": f"sys_call({_nr('finit_module')}, ctypes.c_int(-1), b'', ctypes.c_int(0))",
    "delete_module": f"sys_call({_nr('delete_module')}, b'ptc_no_such_module', ctypes.c_uint(0))",
    "kexec_file_load": f"sys_call({_nr('kexec_file_load')}, ctypes.c_int(-1), ctypes.c_int(-1), 0, None, 0)",
    "kexec_load": f"sys_call({_nr('kexec_load')}, 0, 0, None, ctypes.c_ulong(0xFFFF0000))",
    "bpf": f"sys_call({_nr('bpf')}, ctypes.c_int(0), ctypes.create_string_buffer(128), ctypes.c_uint(128))",
    "perf_event_open": f"sys_call({_nr('perf_event_open')}, ctypes.create_string_buffer(128), 0, -1, -1, 0)",
    "io_uring_setup": f"sys_call({_nr('io_uring_setup')}, ctypes.c_uint(1), ctypes.create_string_buffer(120))",
    "userfaultfd": f"sys_call({_nr('userfaultfd')}, ctypes.c_int(0))",
    "swapon": f"sys_call({_nr('swapon')}, b'/tmp/none', ctypes.c_int(0))",
    "acct": f"sys_call({_nr('acct')}, b'/tmp/acct')",
    "open_by_handle_at": f"sys_call({_nr('open_by_handle_at')}, ctypes.c_int(-1), ctypes.create_string_buffer(16),"
    " ctypes.c_int(0))",
}


@pytest.mark.asyncio
@pytest.mark.parametrize("name", sorted(FILTERED))
async def test_the_filter_refuses(hostile: Hostile, name: str) -> None:
    assert (await hostile.run(f"return {FILTERED[name]}")).ok() in REFUSED_BY_FILTER


@pytest.mark.asyncio
@pytest.mark.parametrize(
    "flags", [CLONE_NEWUSER, CLONE_NEWNS, CLONE_NEWPID, CLONE_NEWNET], ids=["newuser", "newns", "newpid", "newnet"]
)
async def test_clone_into_a_new_namespace_is_refused(hostile: Hostile, flags: int) -> None:
    code = f"""
ctypes.set_errno(0)
pid = libc.syscall(ctypes.c_long({NR["clone"]}), ctypes.c_ulong({flags | SIGCHLD}), None, None, None, None)
if pid == 0:
    os._exit(0)  # the clone went through: the child leaves at once
if pid > 0:
    os.waitpid(pid, 0)
    return 'allowed'
return errname(ctypes.get_errno())
"""
    assert (await hostile.run(code)).ok() in REFUSED_BY_FILTER


@pytest.mark.asyncio
async def test_clone3_is_not_available(hostile: Hostile) -> None:
    # clone3's flags live in memory the filter cannot read: it is refused as missing, so libc falls back to clone.
    code = f"""
import struct
args = ctypes.create_string_buffer(struct.pack('<8Q', {CLONE_NEWUSER}, 0, 0, 0, {SIGCHLD}, 0, 0, 0), 64)
ctypes.set_errno(0)
pid = libc.syscall(ctypes.c_long({NR["clone3"]}), args, ctypes.c_size_t(64))
if pid == 0:
    os._exit(0)
if pid > 0:
    os.waitpid(pid, 0)
    return 'allowed'
return errname(ctypes.get_errno())
"""
    assert (await hostile.run(code)).ok() == "ENOSYS"


@pytest.mark.asyncio
async def test_the_unshare_command_fails(hostile: Hostile) -> None:
    code = """
import shutil, subprocess
if shutil.which('unshare') is None:
    return 'no unshare command'
run = subprocess.run(['unshare', '--user', '--map-root-user', '--mount', 'id', '-u'], capture_output=True, text=True)
return [run.returncode, run.stdout.strip(), run.stderr.strip()]
"""
    result = (await hostile.run(code)).ok()
    if result == "no unshare command":
        pytest.skip("util-linux unshare is not installed")
    returncode, stdout, stderr = result
    assert returncode != 0 and stdout == "" and "Operation not permitted" in stderr, result


@pytest.mark.asyncio
async def test_a_new_user_namespace_through_python_is_refused(hostile: Hostile) -> None:
    # The same attempt through os.unshare where Python has it (3.12+), else libc's unshare().
    code = f"""
if hasattr(os, 'unshare'):
    return attempt(os.unshare, {CLONE_NEWUSER})
ctypes.set_errno(0)
return 'allowed' if libc.unshare({CLONE_NEWUSER}) == 0 else errname(ctypes.get_errno())
"""
    assert (await hostile.run(code)).ok() in REFUSED_BY_FILTER
