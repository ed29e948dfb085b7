"""The program is never root, kernel interfaces stay shut, no set-id files (issue 8 items 1-3, ADR 0049).

Each program below is what the hostile-program review ran, or the step it
relied on; each test checks the host afterwards, not only what the program
reported.
"""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import stat
import struct
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from ptc_plus.runtime import sandbox
from ptc_plus.runtime.run_limits import RunLimits
from ptc_plus.runtime.worker import syscalls

from .conftest import RuntimeFactory

pytestmark = pytest.mark.needs_bwrap

CONFINED = ("workspace-write", "read-only")
AS_ROOT = os.geteuid() == 0
needs_root = pytest.mark.skipif(not AS_ROOT, reason="the host runs as root only in CI (the case under test)")

ERRNO_OF = (
    "import ctypes, errno, os\n"
    "libc = ctypes.CDLL(None, use_errno=True)\n"
    "libc.syscall.restype = ctypes.c_long\n"
    "def sc(*args):\n"
    "    ctypes.set_errno(0)\n"
    "    if libc.syscall(*args) == -1:\n"
    "        return errno.errorcode[ctypes.get_errno()]\n"
    "    return 'allowed'\n"
    "def attempt(action):\n"
    "    try:\n"
    "        action()\n"
    "    except OSError as error:\n"
    "        return errno.errorcode.get(error.errno, str(error.errno))\n"
    "    return 'allowed'\n"
)


async def _run(make_runtime: RuntimeFactory, workspace: Path, code: str, policy: str = "workspace-write") -> object:
    outcome = await make_runtime(policy=policy).run(ERRNO_OF + code, workspace=workspace)
    assert outcome.ok, outcome.to_json()
    return outcome.value


@pytest.mark.asyncio
@pytest.mark.parametrize("policy", CONFINED)
async def test_the_program_is_not_root_on_the_host(make_runtime: RuntimeFactory, workspace: Path, policy: str) -> None:
    code = (
        "lines = open('/proc/self/status').read().splitlines()\n"
        "status = dict(line.split(':\\t', 1) for line in lines if ':\\t' in line)\n"
        "return {'ids': [os.getuid(), os.geteuid(), os.getgid(), os.getegid()], 'groups': os.getgroups(),\n"
        "        'uid_map': open('/proc/self/uid_map').read().split(), 'cap_eff': status['CapEff'].strip(),\n"
        "        'cap_prm': status['CapPrm'].strip(), 'cap_inh': status['CapInh'].strip(),\n"
        "        'cap_amb': status['CapAmb'].strip(), 'no_new_privs': status['NoNewPrivs'].strip(),\n"
        "        'seccomp': status['Seccomp'].strip()}\n"
    )
    value = await _run(make_runtime, workspace, code, policy)
    assert isinstance(value, dict)
    assert value["cap_eff"] == value["cap_prm"] == value["cap_inh"] == value["cap_amb"] == "0000000000000000"
    assert value["no_new_privs"] == "1" and value["seccomp"] == "2"
    if AS_ROOT:
        # The identity map of the initial user namespace: the uid the program reports is its uid on the host.
        assert value["uid_map"] == ["0", "0", "4294967295"]
        assert value["ids"] == [sandbox.SANDBOX_UID] * 2 + [sandbox.SANDBOX_GID] * 2
        assert value["groups"] == []
    else:
        assert value["ids"][:2] == [os.getuid(), os.getuid()]


def _sysctl(name: str) -> str:
    return Path("/proc/sys", *name.split(".")).read_text()


def _restore_sysctls(values: dict[str, str]) -> None:
    """Put back anything a run changed (a regression must not leave the host's kernel altered)."""
    for name, value in values.items():
        if _sysctl(name) != value:
            Path("/proc/sys", *name.split(".")).write_text(value)


@pytest.mark.asyncio
@pytest.mark.parametrize("policy", CONFINED)
async def test_kernel_settings_cannot_be_written(make_runtime: RuntimeFactory, workspace: Path, policy: str) -> None:
    before = {name: _sysctl(name) for name in ("kernel.core_pattern", "vm.swappiness", "kernel.hostname")}
    code = (
        "return {\n"
        "  'core_pattern': attempt(lambda: open('/proc/sys/kernel/core_pattern', 'w').write('|/tmp/pwn %p')),\n"
        "  'swappiness': attempt(lambda: open('/proc/sys/vm/swappiness', 'w').write('13')),\n"
        "  'hostname': attempt(lambda: open('/proc/sys/kernel/hostname', 'w').write('pwned')),\n"
        "  'sysrq': attempt(lambda: open('/proc/sysrq-trigger', 'w').write('h')),\n"
        "}\n"
    )
    try:
        value = await _run(make_runtime, workspace, code, policy)
        after = {name: _sysctl(name) for name in before}
    finally:
        _restore_sysctls(before)
    assert isinstance(value, dict)
    for name in ("core_pattern", "swappiness", "hostname"):
        assert value[name] in ("EROFS", "EACCES", "EPERM"), value
    assert value["sysrq"] in ("EROFS", "EACCES", "EPERM", "ENOENT"), value
    assert after == before


def _add_host_key(description: bytes, payload: bytes) -> int:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    key_spec_user_keyring = -4
    serial = int(libc.syscall(248, b"user", description, payload, len(payload), key_spec_user_keyring))
    if serial < 0:
        pytest.skip(f"keyrings are not usable on this host: {os.strerror(ctypes.get_errno())}")
    return serial


def _serials(proc_keys: str) -> set[str]:
    return {line.split()[0] for line in proc_keys.splitlines() if line.strip()}


@pytest.fixture
def host_key() -> Iterator[int]:
    serial = _add_host_key(b"ptc-test-host-secret", b"host secret")
    yield serial
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall(250, 9, serial, -4)  # KEYCTL_UNLINK from the user keyring: leave it as found


@pytest.mark.asyncio
@pytest.mark.skipif(os.uname().machine != "x86_64", reason="raw system-call numbers below are x86_64's")
async def test_keyrings_are_refused(make_runtime: RuntimeFactory, workspace: Path, host_key: int) -> None:
    keys_before = Path("/proc/keys").read_text()
    code = (
        f"buffer = ctypes.create_string_buffer(64)\n"
        f"return {{\n"
        f"  'add_key': sc(248, b'user', b'planted', b'x', 1, -4),\n"
        f"  'read_host_key': sc(250, 11, {host_key}, buffer, 64),\n"
        f"  'request_key': sc(249, b'user', b'ptc-test-host-secret', None, -4),\n"
        f"  'join_session': sc(250, 1, b'planted-session'),\n"
        f"}}\n"
    )
    value = await _run(make_runtime, workspace, code)
    assert value == {"add_key": "EPERM", "read_host_key": "EPERM", "request_key": "EPERM", "join_session": "EPERM"}
    keys_after = Path("/proc/keys").read_text()
    assert "planted" not in keys_after
    assert _serials(keys_after) <= _serials(keys_before)  # nothing new on the host (expired keys may vanish)


@pytest.mark.asyncio
async def test_set_id_bits_never_reach_the_workspace(make_runtime: RuntimeFactory, workspace: Path) -> None:
    code = (
        "import shutil, sys\n"
        "shutil.copy(sys.executable, 'python-copy')\n"
        "fd = os.open('plain', os.O_CREAT | os.O_WRONLY, 0o755)\n"
        "os.close(fd)\n"
        "return {\n"
        "  'chmod_u+s': attempt(lambda: os.chmod('python-copy', 0o4755)),\n"
        "  'chmod_g+s': attempt(lambda: os.chmod('python-copy', 0o2755)),\n"
        "  'fchmod': attempt(lambda: os.fchmod(os.open('plain', os.O_RDONLY), 0o6755)),\n"
        "  'fchmodat_nofollow': attempt(lambda: os.chmod('plain', 0o4700, follow_symlinks=False)),\n"
        "  'open_with_suid': attempt(lambda: os.close(os.open('created', os.O_CREAT | os.O_WRONLY, 0o4755))),\n"
        "  'mknod_with_sgid': attempt(lambda: os.mknod('node', 0o100000 | 0o2755)),\n"
        "  'dir_with_sgid': attempt(lambda: (os.mkdir('d'), os.chmod('d', 0o2775))),\n"
        "  'chmod_plain': attempt(lambda: os.chmod('plain', 0o700)),\n"
        "}\n"
    )
    value = await _run(make_runtime, workspace, code)
    assert isinstance(value, dict)
    assert value.pop("chmod_plain") == "allowed"
    assert set(value.values()) == {"EPERM"}, value
    for path in workspace.rglob("*"):
        mode = path.lstat().st_mode
        assert not mode & (stat.S_ISUID | stat.S_ISGID), (path, oct(mode))
        if AS_ROOT and not path.is_relative_to(workspace / ".ptc-plus"):
            assert path.lstat().st_uid == os.geteuid(), path  # owned by the invoking user, not "nobody"
    assert (workspace / "python-copy").stat().st_mode & 0o777 == 0o755


@pytest.mark.asyncio
@pytest.mark.skipif(os.uname().machine != "x86_64", reason="raw system-call numbers below are x86_64's")
async def test_kernel_surfaces_a_program_never_needs_are_refused(make_runtime: RuntimeFactory, workspace: Path) -> None:
    code = (
        "import subprocess, threading\n"
        "result = {\n"
        "  'ptrace_attach': sc(101, 16, 1, 0, 0),\n"
        "  'mount': sc(165, b'none', b'/tmp', b'tmpfs', 0, None),\n"
        "  'unshare_user': sc(272, 0x10000000),\n"
        "  'unshare_mount': sc(272, 0x00020000),\n"
        "  'setns': sc(308, 0, 0),\n"
        "  'clone_newuser': sc(56, 0x10000000 | 17, 0, 0, 0, 0),\n"
        "  'bpf': sc(321, 0, 0, 0),\n"
        "  'perf_event_open': sc(298, 0, 0, -1, -1, 0),\n"
        "  'io_uring_setup': sc(425, 8, 0),\n"
        "  'init_module': sc(175, 0, 0, b''),\n"
        "  'kexec_load': sc(246, 0, 0, 0, 0),\n"
        "  'process_vm_readv': sc(310, 1, 0, 0, 0, 0, 0),\n"
        "  'userfaultfd': sc(323, 0),\n"
        "  'setxattr': attempt(lambda: os.setxattr('.', 'user.x', b'1')),\n"
        "  'clone3': sc(435, 0, 0),\n"
        "  'openat2': sc(437, -100, b'.', 0, 0),\n"
        "}\n"
        "box = []\n"
        "thread = threading.Thread(target=lambda: box.append('thread ran'))\n"
        "thread.start(); thread.join()\n"
        "result['thread'] = box[0]\n"
        "result['subprocess'] = subprocess.run(['/bin/echo', 'child ran'], capture_output=True, text=True).stdout\n"
        "return result\n"
    )
    value = await _run(make_runtime, workspace, code)
    assert isinstance(value, dict)
    assert value.pop("thread") == "thread ran"
    assert value.pop("subprocess") == "child ran\n"
    assert value.pop("clone3") == "ENOSYS" and value.pop("openat2") == "ENOSYS"  # the C library falls back
    assert set(value.values()) == {"EPERM"}, value


@pytest.mark.asyncio
async def test_private_tmp_is_writable_and_dev_shm_is_not(make_runtime: RuntimeFactory, workspace: Path) -> None:
    code = (
        "return {'tmp': attempt(lambda: open('/tmp/scratch', 'w').write('x')),\n"
        "        'shm': attempt(lambda: open('/dev/shm/planted', 'w').write('x'))}\n"
    )
    assert await _run(make_runtime, workspace, code) == {"tmp": "allowed", "shm": "EACCES" if AS_ROOT else "EROFS"}


@pytest.mark.asyncio
async def test_nothing_is_writable_under_read_only(make_runtime: RuntimeFactory, workspace: Path) -> None:
    code = (
        "return sorted({attempt(lambda: open(path, 'w').write('x'))\n"
        "               for path in ('/tmp/scratch', '/dev/shm/planted', 'in-workspace', '/planted')})\n"
    )
    value = await _run(make_runtime, workspace, code, policy="read-only")
    assert isinstance(value, list) and value and "allowed" not in value, value
    assert set(value) <= {"EROFS", "EACCES", "ENOENT"}, value
    assert list(workspace.iterdir()) == []


@pytest.mark.asyncio
@needs_root
async def test_a_workspace_that_cannot_be_confined_is_sandbox_unavailable(
    make_runtime: RuntimeFactory, tmp_path: Path
) -> None:
    """ramfs refuses idmapped mounts: the run must not go ahead as root, nor be misreported as a crash."""
    mount_point = tmp_path / "ramfs"
    mount_point.mkdir()
    subprocess.run(["mount", "-t", "ramfs", "none", str(mount_point)], check=True)
    try:
        workspace = mount_point / "workspace"
        workspace.mkdir()
        outcome = await make_runtime(policy="workspace-write").run("return 1", workspace=workspace)
    finally:
        subprocess.run(["umount", "-l", str(mount_point)], check=True)
    assert outcome.failure is not None and outcome.failure.kind == "sandbox-unavailable", outcome.to_json()
    assert "idmap" in outcome.failure.message()


@pytest.mark.parametrize("machine", ["x86_64", "aarch64"])
def test_filter_program_is_well_formed(machine: str) -> None:
    program = syscalls.filter_program(machine)
    assert len(program) % 8 == 0
    count = len(program) // 8
    assert count < 4096  # BPF_MAXINSNS
    for index in range(count):
        code, jt, jf, _k = struct.unpack_from("=HBBI", program, index * 8)
        if code & 0x07 == 0x05:  # BPF_JMP: both branches land inside the program
            assert index + 1 + max(jt, jf) < count
    assert program[-8:] == struct.pack("=HBBI", 0x06, 0, 0, 0x7FFF0000)  # default: allow
    table = syscalls.numbers(machine)
    assert {"keyctl", "add_key", "request_key", "ptrace", "mount", "unshare", "setns", "bpf"} <= set(table)
    with pytest.raises(syscalls.UnsupportedArchitecture):
        syscalls.filter_program("sparc64")


def test_every_refused_call_is_known_on_x86_64() -> None:
    missing = [name for name in syscalls.REFUSED if name not in syscalls.numbers("x86_64")]
    assert missing == []


@pytest.mark.asyncio
async def test_third_party_packages_of_the_interpreter_are_not_visible(
    make_runtime: RuntimeFactory, workspace: Path
) -> None:
    prefix = sandbox.python_prefix(RunLimits().python)
    installed = [path for path in Path(prefix).glob("lib/python3*/site-packages") if any(path.iterdir())]
    if prefix.startswith("/usr/") or not installed:
        pytest.skip("the interpreter has no private site-packages here")
    code = f"return [sorted(os.listdir(p)) for p in {[str(path) for path in installed]!r}]"
    assert await _run(make_runtime, workspace, code) == [[] for _ in installed]


UNPRIVILEGED_PROBE = """
import ctypes, errno, json, os, sys
sys.path.append(sys.argv[1])
from worker import confine
confine.apply(json.loads(sys.argv[2][len('--confine='):]))
libc = ctypes.CDLL(None, use_errno=True)
def attempt(action):
    try:
        action()
    except OSError as error:
        return errno.errorcode[error.errno]
    return 'allowed'
ctypes.set_errno(0)
keyctl = 'allowed' if libc.syscall(248, b'user', b'planted', b'x', 1, -4) >= 0 else errno.errorcode[ctypes.get_errno()]
open('file', 'w').close()
status = dict(line.split(':\\t', 1) for line in open('/proc/self/status').read().splitlines() if ':\\t' in line)
print(json.dumps({
    'uid': os.getuid(),
    'no_new_privs': status['NoNewPrivs'].strip(),
    'seccomp': status['Seccomp'].strip(),
    'add_key': keyctl,
    'chmod_suid': attempt(lambda: os.chmod('file', 0o4755)),
    'core_pattern': attempt(lambda: open('/proc/sys/kernel/core_pattern', 'w').write('|/x')),
}))
"""


@pytest.fixture
def public_tmp() -> Iterator[Path]:
    """A scratch directory another user can reach (pytest's own lies under a ``0700`` parent)."""
    path = Path(tempfile.mkdtemp(prefix="ptc-unprivileged-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path)


@needs_root  # to become another, unprivileged user for the test
@pytest.mark.skipif(not os.path.exists("/usr/bin/setpriv"), reason="setpriv (util-linux) is needed to drop to a user")
def test_an_unprivileged_host_gets_no_new_privileges_and_the_filter(public_tmp: Path) -> None:
    """The non-root path of ADR 0049, for real: bubblewrap started by an ordinary user (here uid 65534).

    The worker is stdlib-only, so the system's interpreter stands in for the
    host's (whose pyenv prefix under ``/root`` another user cannot reach), and
    a copy of the worker package stands in for the checkout (which may lie
    under a ``0700`` directory).
    """
    python = "/usr/bin/python3"
    if not os.path.exists(python):
        pytest.skip("no system Python for the unprivileged user")
    workspace = public_tmp / "workspace"
    workspace.mkdir()
    os.chown(workspace, 65534, 65534)
    runtime_dir = public_tmp / "runtime"
    worker = Path(sandbox.__file__).resolve().parent / "worker"
    shutil.copytree(worker, runtime_dir / "worker", ignore=shutil.ignore_patterns("__pycache__"))
    limits = RunLimits(policy="workspace-write", python=python)
    command = [python, "-I", "-S", "-c", UNPRIVILEGED_PROBE, str(runtime_dir)]
    argv = sandbox.confine(command, limits, workspace, runtime_dir, host_is_root=False)
    assert "--cap-add" not in argv
    as_user = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all", "--"]
    keys_before = _serials(Path("/proc/keys").read_text())
    done = subprocess.run(as_user + argv, capture_output=True, text=True, cwd=workspace, timeout=60)
    if done.returncode != 0 and "namespace" in done.stderr.lower():
        pytest.skip(f"unprivileged user namespaces are not available here: {done.stderr.strip()}")
    assert done.returncode == 0, done.stderr
    value = json.loads(done.stdout)
    assert value == {
        "uid": 65534,
        "no_new_privs": "1",
        "seccomp": "2",
        "add_key": "EPERM",
        "chmod_suid": "EPERM",
        "core_pattern": value["core_pattern"],
    }
    assert value["core_pattern"] in ("EROFS", "EACCES")
    assert (workspace / "file").stat().st_uid == 65534
    assert _serials(Path("/proc/keys").read_text()) <= keys_before


def _evaluate(program: bytes, nr: int, arch: int, args: tuple[int, ...] = (0,) * 6) -> int:
    """Run a classic-BPF seccomp program the way the kernel does, over one ``struct seccomp_data``."""
    data = struct.pack("=iIQ6Q", nr, arch, 0, *args)
    accumulator, pc = 0, 0
    while True:
        code, jt, jf, k = struct.unpack_from("=HBBI", program, pc * 8)
        pc += 1
        if code == 0x20:  # ld [k]
            accumulator = struct.unpack_from("=I", data, k)[0]
        elif code == 0x06:  # ret k
            return k
        elif code in (0x15, 0x35, 0x45):  # jeq / jge / jset
            taken = {0x15: accumulator == k, 0x35: accumulator >= k, 0x45: bool(accumulator & k)}[code]
            pc += jt if taken else jf
        else:
            raise AssertionError(f"unexpected opcode {code:#x}")


@pytest.mark.parametrize(("machine", "arch"), [("x86_64", 0xC000003E), ("aarch64", 0xC00000B7)])
def test_filter_decides_every_call_number_as_listed(machine: str, arch: int) -> None:
    program = syscalls.filter_program(machine)
    table = syscalls.numbers(machine)
    by_number = {number: name for name, number in table.items()}
    allow, eperm, enosys = 0x7FFF0000, 0x00050000 | 1, 0x00050000 | 38
    for nr in range(600):
        name = by_number.get(nr)
        plain = _evaluate(program, nr, arch)
        if name in syscalls.REFUSED:
            assert plain == eperm, name
        elif name in syscalls.UNSUPPORTED:
            assert plain == enosys, name
        else:
            assert plain == allow, (nr, name)
        if name in syscalls.MODE_ARGUMENT:
            at = syscalls.MODE_ARGUMENT[name]
            for mode, expected in ((0o755, allow), (0o4755, eperm), (0o2700, eperm), (0o1777, allow)):
                args = tuple(mode if index == at else 0 for index in range(6))
                assert _evaluate(program, nr, arch, args) == expected, (name, oct(mode))
    clone = table["clone"]
    assert _evaluate(program, clone, arch, (0x10000000 | 17, 0, 0, 0, 0, 0)) == eperm
    assert _evaluate(program, clone, arch, (0x003D0F00, 0, 0, 0, 0, 0)) == allow  # a thread's flags
    assert _evaluate(program, 0, 0x40000003) == 0x80000000  # another architecture: killed
    if machine == "x86_64":
        assert _evaluate(program, 0x40000000 | 1, arch) == 0x80000000  # the x32 ABI: killed


def test_the_filter_is_refused_to_a_process_with_a_second_thread() -> None:
    """``PR_SET_SECCOMP`` filters one thread: a thread started before it would run unfiltered."""
    program = (
        "import sys, threading, time\n"
        "sys.path.append(sys.argv[1])\n"
        "from worker import confine\n"
        "threading.Thread(target=time.sleep, args=(5,), daemon=True).start()\n"
        "try:\n"
        "    confine.apply({})\n"
        "except confine.ConfinementError as error:\n"
        "    print('refused:', error)\n"
    )
    runtime_dir = Path(sandbox.__file__).resolve().parent
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", program, str(runtime_dir)], capture_output=True, text=True, timeout=60
    )
    assert done.stdout.startswith("refused: more than one thread"), (done.stdout, done.stderr)
