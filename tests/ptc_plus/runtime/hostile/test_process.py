"""Process attacks: fork bombs, daemons that leave the group, signals out of the sandbox, prctl, ptrace, privileges.

After every run the guard checks that no process carrying the test's
marker (command line or environment) or working in its directory is alive.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator

import pytest

from .conftest import NR, Hostile, needs_syscall_numbers

pytestmark = [pytest.mark.needs_bwrap]

SLEEPER = (
    "[sys.executable, '-c', "
    "'import signal, time\\nfor s in (1, 2, 15):\\n    signal.signal(s, signal.SIG_IGN)\\ntime.sleep(600)', MARKER]"
)
"""Program text: argv of a process that ignores SIGHUP/SIGINT/SIGTERM and sleeps, the marker on its command line."""


@pytest.fixture
def bait_process() -> Iterator[subprocess.Popen[bytes]]:
    """A host process the program must not be able to signal (no marker: the guard must not kill it)."""
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    yield process
    process.kill()
    process.wait()


@pytest.mark.gvisor_default
@pytest.mark.asyncio
async def test_fork_loop_stops_at_the_process_cap(hostile: Hostile) -> None:
    code = """
import time
count = 0
try:
    while count < 5000:
        pid = os.fork()
        if pid == 0:
            time.sleep(600)
            os._exit(0)
        count += 1
except OSError as error:
    return [count, errname(error.errno)]
return [count, 'allowed']
"""
    count, refusal = (await hostile.run(code)).ok()
    assert refusal == "EAGAIN"
    assert count < 64  # RunLimits.max_processes


@pytest.mark.asyncio
async def test_exponential_fork_bomb_is_stopped_by_the_timeout(hostile: Hostile) -> None:
    code = """
while True:
    try:
        os.fork()
    except OSError:
        pass
"""
    outcome = (await hostile.run(code, timeout=2)).failed("timeout")
    assert outcome.elapsed < 2 + 3 + 10  # timeout + grace, with room for a loaded machine


@pytest.mark.asyncio
async def test_double_fork_setsid_daemon_does_not_survive(hostile: Hostile) -> None:
    code = f"""
pid = os.fork()
if pid == 0:
    os.setsid()
    if os.fork() == 0:
        os.chdir('/')
        os.execv(sys.executable, {SLEEPER})
    os._exit(0)
os.waitpid(pid, 0)
return 'daemonized'
"""
    assert (await hostile.run(code)).ok() == "daemonized"


@pytest.mark.asyncio
async def test_orphans_left_running_at_return_do_not_survive(hostile: Hostile) -> None:
    code = f"""
import subprocess
for _ in range(5):
    subprocess.Popen({SLEEPER}, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
return 'spawned'
"""
    assert (await hostile.run(code)).ok() == "spawned"


@pytest.mark.asyncio
async def test_orphans_left_running_at_timeout_do_not_survive(hostile: Hostile) -> None:
    code = f"""
import subprocess
for _ in range(3):
    subprocess.Popen({SLEEPER}, start_new_session=True)
while True:
    pass
"""
    (await hostile.run(code, timeout=1)).failed("timeout")


@pytest.mark.asyncio
@needs_syscall_numbers
async def test_host_processes_cannot_be_signalled(hostile: Hostile, bait_process: subprocess.Popen[bytes]) -> None:
    code = f"""
import signal
return [attempt(os.kill, {bait_process.pid}, signal.SIGKILL), sys_call({NR["pidfd_open"]}, {bait_process.pid}, 0)]
"""
    assert (await hostile.run(code)).ok() == ["ESRCH", "ESRCH"]
    assert bait_process.poll() is None, "the host's bait process was killed from inside the sandbox"


@pytest.mark.asyncio
async def test_the_sandbox_parent_cannot_be_killed(hostile: Hostile) -> None:
    code = """
import signal, time
parent = os.getppid()
result = [parent, attempt(os.kill, parent, signal.SIGKILL), attempt(os.kill, 1, signal.SIGKILL)]
time.sleep(0.2)
return result
"""
    parent, kill_parent, kill_init = (await hostile.run(code)).ok()
    assert parent == 1
    assert kill_parent == kill_init == "EPERM"  # pid 1 is bubblewrap's, and the program is not root


@pytest.mark.asyncio
async def test_only_the_sandbox_processes_are_visible(hostile: Hostile, bait_process: subprocess.Popen[bytes]) -> None:
    code = """
seen = {}
for entry in os.listdir('/proc'):
    if entry.isdigit():
        try:
            seen[entry] = open(f'/proc/{entry}/cmdline', 'rb').read().replace(b'\\0', b' ').decode()
        except OSError as error:
            seen[entry] = errname(error.errno)
return seen
"""
    seen = (await hostile.run(code)).ok()
    assert str(bait_process.pid) not in seen
    assert len(seen) <= 4, seen  # bubblewrap's pid 1, the worker, maybe the outer bubblewrap: never the host's
    assert all("bwrap" in cmdline or "/ptc-runtime" in cmdline for cmdline in seen.values()), seen


@pytest.mark.asyncio
async def test_prctl_cannot_regain_privileges_or_hide_a_daemon(hostile: Hostile) -> None:
    code = f"""
def prctl(*args):
    ctypes.set_errno(0)
    result = libc.prctl(*[ctypes.c_ulong(a) for a in args])
    return 'allowed' if result >= 0 else errname(ctypes.get_errno())
results = {{
    'rewrite_cmdline': prctl(35, 8, 0x10000, 0, 0),  # PR_SET_MM, PR_SET_MM_ARG_START
    'ambient_cap_sys_admin': prctl(47, 2, 21, 0, 0),  # PR_CAP_AMBIENT_RAISE CAP_SYS_ADMIN
    'clear_no_new_privs': prctl(38, 0, 0, 0, 0),  # PR_SET_NO_NEW_PRIVS 0
}}
pid = os.fork()
if pid == 0:
    libc.prctl(15, b'kworker/0:1', 0, 0, 0)  # PR_SET_NAME
    libc.prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    libc.prctl(1, 0, 0, 0, 0)  # PR_SET_PDEATHSIG 0
    os.setsid()
    if os.fork() == 0:
        os.chdir('/')
        os.execv(sys.executable, {SLEEPER})
    os.chdir('/')
    os.execv(sys.executable, {SLEEPER})
return results
"""
    results = (await hostile.run(code)).ok()
    assert results == {"rewrite_cmdline": "EPERM", "ambient_cap_sys_admin": "EPERM", "clear_no_new_privs": "EINVAL"}


@pytest.mark.asyncio
@needs_syscall_numbers
async def test_ptrace_is_refused(hostile: Hostile) -> None:
    code = f"""
import time
pid = os.fork()
if pid == 0:
    time.sleep(60)
    os._exit(0)
try:
    return {{
        'attach_child': sys_call({NR["ptrace"]}, ctypes.c_long(16), ctypes.c_long(pid), None, None),
        'seize_child': sys_call({NR["ptrace"]}, ctypes.c_long(0x4206), ctypes.c_long(pid), None, None),
        'attach_init': sys_call({NR["ptrace"]}, ctypes.c_long(16), ctypes.c_long(1), None, None),
        'traceme': sys_call({NR["ptrace"]}, ctypes.c_long(0), ctypes.c_long(0), None, None),
        'vm_readv_child': sys_call({NR["process_vm_readv"]}, ctypes.c_long(pid), None, 0, None, 0, 0),
    }}
finally:
    os.kill(pid, 9)
    os.waitpid(pid, 0)
"""
    results = (await hostile.run(code)).ok()
    assert results == dict.fromkeys(results, "EPERM") and len(results) == 5, results


@pytest.mark.asyncio
async def test_the_program_is_not_root(hostile: Hostile) -> None:
    code = """
status = dict(line.split(':', 1) for line in open('/proc/self/status').read().splitlines())
return {
    'ids': [os.getuid(), os.geteuid(), os.getgid(), os.getegid()],
    'groups': os.getgroups(),
    'caps': {name: int(status[name].strip(), 16) for name in ('CapPrm', 'CapEff', 'CapAmb')},
}
"""
    found = (await hostile.run(code)).ok()
    assert 0 not in found["ids"], found
    assert 0 not in found["groups"], found
    assert found["caps"] == {"CapPrm": 0, "CapEff": 0, "CapAmb": 0}, found


@pytest.mark.asyncio
async def test_no_new_privileges_and_a_seccomp_filter(hostile: Hostile) -> None:
    code = """
status = dict(line.split(':', 1) for line in open('/proc/self/status').read().splitlines())
return [status['NoNewPrivs'].strip(), status['Seccomp'].strip()]
"""
    assert (await hostile.run(code)).ok() == ["1", "2"]
