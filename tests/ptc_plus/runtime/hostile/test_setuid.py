"""Set-user-ID and set-group-ID files (issue 8 item 3) and file capabilities.

Every way of giving a workspace file a set-id bit must be refused; the
guard walks the workspace on the host after each run and fails on any
setuid/setgid bit or ``security.capability`` attribute it finds.
"""

from __future__ import annotations

import os
import stat

import pytest

from .conftest import NR, Hostile, needs_syscall_numbers

pytestmark = [pytest.mark.needs_bwrap]

COPY_BINARY = "import shutil\nshutil.copy(sys.executable, 'binary')\n"


@pytest.mark.asyncio
@pytest.mark.parametrize("mode", [0o4755, 0o2755, 0o6755, 0o4711], ids=oct)
async def test_chmod_to_a_set_id_mode_is_refused(hostile: Hostile, mode: int) -> None:
    code = COPY_BINARY + f"return [attempt(os.chmod, 'binary', {mode:#o}), oct(os.stat('binary').st_mode & 0o7777)]"
    refusal, mode_after = (await hostile.run(code)).ok()
    assert refusal == "EPERM"
    assert int(mode_after, 8) & 0o6000 == 0


@pytest.mark.asyncio
async def test_fchmod_on_a_descriptor_is_refused(hostile: Hostile) -> None:
    code = COPY_BINARY + "fd = os.open('binary', os.O_RDONLY)\nreturn attempt(os.fchmod, fd, 0o4755)"
    assert (await hostile.run(code)).ok() == "EPERM"


@pytest.mark.asyncio
@needs_syscall_numbers
async def test_fchmodat2_is_refused(hostile: Hostile) -> None:
    code = COPY_BINARY + f"return sys_call({NR['fchmodat2']}, ctypes.c_int(-100), b'binary', ctypes.c_uint(0o4755), 0)"
    assert (await hostile.run(code)).ok() == "EPERM"


@pytest.mark.asyncio
@needs_syscall_numbers
async def test_every_system_call_that_takes_a_mode_refuses_set_id_bits(hostile: Hostile) -> None:
    """The raw calls, past the C library: descriptors, ``/proc/self/fd``, ``O_TMPFILE`` and the legacy ABI."""
    at_cwd, at_empty_path = "ctypes.c_int(-100)", 0x1000
    tmpfile = os.O_TMPFILE | os.O_WRONLY
    code = (
        COPY_BINARY
        + "fd = os.open('binary', os.O_RDONLY)\n"
        + "path_fd = os.open('binary', os.O_PATH)\n"
        + "how = ctypes.create_string_buffer(struct.pack('=QQQ', os.O_CREAT | os.O_WRONLY, 0o4755, 0))\n"
        + f"""return {{
    'chmod_proc_fd': attempt(os.chmod, f'/proc/self/fd/{{fd}}', 0o4755),
    'fchmodat2_empty_path': sys_call({NR["fchmodat2"]}, ctypes.c_int(path_fd), b'', 0o4755, {at_empty_path}),
    'open_tmpfile': sys_call({NR["open"]}, b'.', {tmpfile}, 0o4755),
    'openat_tmpfile': sys_call({NR["openat"]}, {at_cwd}, b'.', {tmpfile}, 0o2755),
    'creat': sys_call({NR["creat"]}, b'created', 0o4755),
    'mknodat': sys_call({NR["mknodat"]}, {at_cwd}, b'made', 0o100000 | 0o6755, 0),
    'openat2': sys_call({NR["openat2"]}, {at_cwd}, b'opened', how, 24),
}}
"""
    )
    results = (await hostile.run("import struct\n" + code)).ok()
    assert results == {**dict.fromkeys(results, "EPERM"), "openat2": "ENOSYS"}, results


@pytest.mark.asyncio
async def test_creating_a_file_with_a_set_id_mode_is_refused(hostile: Hostile) -> None:
    code = """
return {
    'open': attempt(os.open, 'opened', os.O_CREAT | os.O_WRONLY, 0o4755),
    'open_setgid': attempt(os.open, 'opened-g', os.O_CREAT | os.O_WRONLY, 0o2755),
    'mknod': attempt(os.mknod, 'made', 0o100000 | 0o4755),
}
"""
    results = (await hostile.run(code)).ok()
    assert results == dict.fromkeys(results, "EPERM"), results


@pytest.mark.asyncio
async def test_the_chmod_command_cannot_set_the_bit(hostile: Hostile) -> None:
    code = (
        COPY_BINARY
        + "import subprocess\n"
        + "run = subprocess.run(['chmod', 'u+s,g+s', 'binary'], capture_output=True, text=True)\n"
        + "return [run.returncode, run.stderr]"
    )
    returncode, stderr = (await hostile.run(code)).ok()
    assert returncode != 0 and "Operation not permitted" in stderr, stderr


@pytest.mark.asyncio
async def test_copying_a_setuid_binary_keeps_no_bit(hostile: Hostile) -> None:
    sources = [
        path
        for path in ("/usr/bin/su", "/usr/bin/passwd", "/usr/bin/mount", "/usr/bin/newgrp", "/usr/bin/chsh")
        if os.path.exists(path) and os.stat(path).st_mode & stat.S_ISUID
    ]
    if not sources:
        pytest.skip("no setuid binary on this machine to copy")
    code = f"""
import shutil
return [attempt(shutil.copy2, {sources[0]!r}, 'copied'), oct(os.stat('copied').st_mode & 0o7777)]
"""
    refusal, mode_after = (await hostile.run(code)).ok()
    assert refusal == "EPERM"  # copystat's chmod
    assert int(mode_after, 8) & 0o6000 == 0


@pytest.mark.asyncio
async def test_a_tar_archive_cannot_smuggle_a_setuid_member(hostile: Hostile) -> None:
    code = """
import io, tarfile
data = b'#!/bin/sh\\nid\\n'
buffer = io.BytesIO()
with tarfile.open(fileobj=buffer, mode='w') as archive:
    member = tarfile.TarInfo('payload')
    member.size, member.mode = len(data), 0o4755
    archive.addfile(member, io.BytesIO(data))
buffer.seek(0)
with tarfile.open(fileobj=buffer) as archive:
    archive.extractall('extracted')
return oct(os.stat('extracted/payload').st_mode & 0o7777)
"""
    assert int((await hostile.run(code)).ok(), 8) & 0o6000 == 0


@pytest.mark.asyncio
async def test_file_capabilities_cannot_be_set(hostile: Hostile) -> None:
    # VFS_CAP_REVISION_2 granting CAP_SETUID (bit 7) permitted and effective.
    code = (
        COPY_BINARY
        + "import struct\n"
        + "cap = struct.pack('<IIIII', 0x02000001, 1 << 7, 1 << 7, 0, 0)\n"
        + "return [attempt(os.setxattr, 'binary', 'security.capability', cap),"
        + " attempt(os.setxattr, 'binary', 'trusted.overlay.opaque', b'y')]"
    )
    capability, trusted = (await hostile.run(code)).ok()
    assert capability == "EPERM"
    assert trusted == "EPERM"
