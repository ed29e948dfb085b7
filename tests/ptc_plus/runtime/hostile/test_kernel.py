"""Kernel settings: ``/proc/sys``, ``/proc/sysrq-trigger``, ``/sys``, OOM score and resource limits.

The guard reads the host's ``kernel.core_pattern``, ``vm.swappiness`` and
the other settings in :data:`~.guard.SYSCTLS` before and after every run
(and restores any that changed). Writes that would change a setting use a
value the host can recognise; the others write back the value read, so a
write that gets through changes nothing on the host but is still reported
by the program as ``allowed``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import BLOCKED_PATH, Hostile

pytestmark = [pytest.mark.needs_bwrap]


@pytest.mark.asyncio
async def test_core_pattern_cannot_be_set(hostile: Hostile) -> None:
    # Issue 8 item 1: a core_pattern of "|<workspace>/script" ran the program's script as root on the host.
    code = "return attempt(lambda: open('/proc/sys/kernel/core_pattern', 'w').write('core.' + MARKER))"
    assert (await hostile.run(code)).ok() in BLOCKED_PATH


@pytest.mark.asyncio
async def test_swappiness_cannot_be_set(hostile: Hostile) -> None:
    current = Path("/proc/sys/vm/swappiness").read_text().strip()
    other = "37" if current != "37" else "38"
    code = f"return attempt(lambda: open('/proc/sys/vm/swappiness', 'w').write('{other}'))"
    assert (await hostile.run(code)).ok() in BLOCKED_PATH


@pytest.mark.gvisor_default
@pytest.mark.asyncio
async def test_no_kernel_setting_is_writable(hostile: Hostile) -> None:
    code = """
names = ['kernel/poweroff_cmd', 'kernel/randomize_va_space', 'kernel/kptr_restrict', 'kernel/dmesg_restrict',
         'kernel/perf_event_paranoid', 'kernel/unprivileged_bpf_disabled', 'kernel/panic', 'kernel/sysrq',
         'kernel/hostname', 'fs/protected_hardlinks', 'fs/protected_symlinks', 'vm/overcommit_memory',
         'kernel/core_uses_pid', 'kernel/io_uring_disabled', 'net/ipv4/ip_forward']
results = {}
for name in names:
    path = '/proc/sys/' + name
    def write_back():
        value = open(path).read()
        with open(path, 'w') as handle:
            handle.write(value)
    results[name] = attempt(write_back)
return results
"""
    results = (await hostile.run(code)).ok()
    assert set(results.values()) <= BLOCKED_PATH, {name: r for name, r in results.items() if r not in BLOCKED_PATH}


@pytest.mark.asyncio
async def test_sysrq_trigger_is_refused(hostile: Hostile) -> None:
    # 'h' only prints the SysRq help to the kernel log: harmless if it got through, and then reported as allowed.
    code = "return attempt(lambda: open('/proc/sysrq-trigger', 'w').write('h'))"
    assert (await hostile.run(code)).ok() in BLOCKED_PATH


WRITE_BACK = """
results = {{}}
for path in {paths}:
    def write_back():
        value = open(path).read()
        with open(path, 'w') as handle:
            handle.write(value)
    results[path] = attempt(write_back)
return results
"""
"""Program: write each path's own value back to it (harmless if it were allowed); errno name or 'allowed'."""


@pytest.mark.asyncio
async def test_proc_sys_cannot_be_reached_through_another_proc(hostile: Hostile) -> None:
    paths = """['/proc/self/root/proc/sys/kernel/core_pattern', '/proc/1/root/proc/sys/kernel/core_pattern',
         '/proc/self/task/' + str(os.getpid()) + '/root/proc/sys/vm/swappiness']"""
    code = WRITE_BACK.format(paths=paths)
    results = (await hostile.run(code)).ok()
    assert set(results.values()) <= BLOCKED_PATH, results


@pytest.mark.asyncio
async def test_sys_is_not_writable(hostile: Hostile) -> None:
    paths = """['/sys/kernel/mm/transparent_hugepage/enabled', '/sys/fs/cgroup/pids/cgroup.procs',
         '/sys/fs/cgroup/memory/memory.limit_in_bytes', '/sys/kernel/uevent_helper', '/sys/power/state']"""
    code = WRITE_BACK.format(paths=paths)
    results = (await hostile.run(code)).ok()
    assert set(results.values()) <= BLOCKED_PATH, results


@pytest.mark.asyncio
async def test_the_program_cannot_shield_itself_from_the_oom_killer(hostile: Hostile) -> None:
    code = """
return {
    'self': attempt(lambda: open('/proc/self/oom_score_adj', 'w').write('-1000')),
    'init': attempt(lambda: open('/proc/1/oom_score_adj', 'w').write('1000')),
}
"""
    results = (await hostile.run(code)).ok()
    if hostile.executor == "gvisor":
        # gVisor's kernel keeps oom_score_adj as its own bookkeeping of its own tasks: the host's OOM killer sees
        # only the sentry, whose score no program reaches (ADR 0127). The writes land there, and nowhere else.
        assert results == {"self": "allowed", "init": "allowed"}, results
        return
    assert set(results.values()) <= {"EACCES", "EPERM", "EROFS"}, results


@pytest.mark.asyncio
async def test_resource_limits_cannot_be_raised(hostile: Hostile) -> None:
    code = """
import resource
results = {}
for name in ('RLIMIT_AS', 'RLIMIT_NPROC', 'RLIMIT_NOFILE', 'RLIMIT_FSIZE', 'RLIMIT_CPU', 'RLIMIT_CORE'):
    which = getattr(resource, name)
    soft, hard = resource.getrlimit(which)
    if hard == resource.RLIM_INFINITY:
        results[name] = 'unlimited'
        continue
    try:
        resource.setrlimit(which, (hard + 1, hard + 1))
        results[name] = 'raised'
    except ValueError as error:
        results[name] = str(error)
return results
"""
    results = (await hostile.run(code)).ok()
    assert results.pop("RLIMIT_NPROC") in ("unlimited", "not allowed to raise maximum limit")  # the cgroup counts
    assert results == dict.fromkeys(results, "not allowed to raise maximum limit"), results


@pytest.mark.asyncio
async def test_kernel_log_is_not_readable(hostile: Hostile) -> None:
    code = """
buffer = ctypes.create_string_buffer(4096)
ctypes.set_errno(0)
result = libc.klogctl(3, buffer, 4096)  # SYSLOG_ACTION_READ_ALL
return [errname(ctypes.get_errno()) if result < 0 else 'allowed', attempt(lambda: open('/dev/kmsg').read(1))]
"""
    via_syslog, via_kmsg = (await hostile.run(code)).ok()
    assert via_syslog == "EPERM"
    assert via_kmsg in BLOCKED_PATH
