"""Filesystem attacks: writing or reading outside the workspace, persistence, protected paths, devices, links.

The guard checks the bait tree next to the workspace (``OUTSIDE``) and the
host's shared directories after every run; the tests check the refusal's
errno and the protected files' contents on the host.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from ptc_plus.runtime.sandbox import SANDBOX_GID, SANDBOX_UID

from .conftest import BLOCKED_PATH, Hostile

pytestmark = [pytest.mark.needs_bwrap]


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.gvisor_default
@pytest.mark.asyncio
async def test_writes_outside_the_workspace_are_refused(hostile: Hostile) -> None:
    code = """
targets = [OUTSIDE + '/secret.txt', OUTSIDE + '/planted.txt', OUTSIDE + '/inner/keep.txt', WORKSPACE + '/../outside/x',
           '/etc/' + MARKER, '/usr/' + MARKER, '/root/' + MARKER, '/' + MARKER, '/proc/1/root/' + MARKER]
return {target: attempt(lambda: open(target, 'a').write('escaped')) for target in targets}
"""
    results = (await hostile.run(code)).ok()
    assert set(results.values()) <= BLOCKED_PATH, results


@pytest.mark.gvisor_default
@pytest.mark.asyncio
async def test_host_files_are_not_readable(hostile: Hostile, root_bait: Path) -> None:
    code = f"""
targets = ['/etc/shadow', '/etc/gshadow', '/etc/sudoers', '/root/.bash_history', {str(root_bait)!r},
           OUTSIDE + '/secret.txt', '/proc/1/root/etc/shadow', '/proc/1/root/root/.bash_history']
return {{target: attempt(lambda: open(target, 'rb').read(64)) for target in targets}}
"""
    results = (await hostile.run(code)).ok()
    assert set(results.values()) <= BLOCKED_PATH, results


@pytest.fixture
def root_bait(hostile: Hostile) -> Iterator[Path]:
    """A secret in root's home on the host, named after the marker (the guard expects it, being older than the run)."""
    bait = Path("/root", f"{hostile.marker}.secret")
    bait.write_text("ROOT-SECRET")
    bait.chmod(0o600)
    yield bait
    bait.unlink()


@pytest.mark.asyncio
async def test_tmp_does_not_persist_between_runs(hostile: Hostile) -> None:
    first = await hostile.run("open('/tmp/' + MARKER, 'w').write('left behind')\nreturn MARKER in os.listdir('/tmp')")
    assert first.ok() is True
    second = await hostile.run("return [MARKER in os.listdir('/tmp'), attempt(lambda: open('/tmp/' + MARKER).read())]")
    assert second.ok() == [False, "ENOENT"]


@pytest.mark.asyncio
async def test_dev_shm_is_private_to_the_run(hostile: Hostile) -> None:
    code = "return attempt(lambda: open('/dev/shm/' + MARKER, 'w').write('x'))"
    result = (await hostile.run(code)).ok()
    assert result in BLOCKED_PATH | {"allowed"}, result  # the guard checks the host's /dev/shm
    again = await hostile.run("return attempt(lambda: open('/dev/shm/' + MARKER).read())")
    assert again.ok() in BLOCKED_PATH


@pytest.fixture
def plugin_config(hostile: Hostile) -> Path:
    config = hostile.workspace / ".ptc-plus" / "config.toml"
    config.parent.mkdir()
    config.write_text('[runtime]\npolicy = "workspace-write"\n')
    return config


@pytest.mark.gvisor_default
@pytest.mark.asyncio
async def test_the_plugin_directory_is_read_only(hostile: Hostile, plugin_config: Path) -> None:
    before = digest(plugin_config)
    code = """
import shutil
return {
    'overwrite': attempt(lambda: open('.ptc-plus/config.toml', 'w').write('[runtime]\\npolicy = "danger"\\n')),
    'create': attempt(lambda: open('.ptc-plus/new.toml', 'w').write('x')),
    'unlink': attempt(os.unlink, '.ptc-plus/config.toml'),
    'rename_away': attempt(os.rename, '.ptc-plus', 'moved'),
    'remove_tree': attempt(shutil.rmtree, '.ptc-plus'),
    'hardlink_out': attempt(os.link, '.ptc-plus/config.toml', 'config-link'),
}
"""
    results = (await hostile.run(code)).ok()
    assert set(results.values()) <= BLOCKED_PATH | {"EBUSY", "EXDEV"}, results
    assert digest(plugin_config) == before
    assert sorted(os.listdir(plugin_config.parent)) == ["config.toml"]


@pytest.mark.asyncio
async def test_the_hosts_state_directory_is_read_only(hostile: Hostile) -> None:
    # The reference host keeps its session logs in <workspace>/.agent-host (its protected path).
    code = """
logs = '.agent-host/sessions'
names = sorted(os.listdir(logs))
return [names, {name: attempt(lambda: open(f'{logs}/{name}', 'a').write('{"forged": true}\\n')) for name in names},
        attempt(lambda: open(f'{logs}/forged.jsonl', 'w').write('x'))]
"""
    names, appended, created = (await hostile.run(code)).ok()
    assert names, "the host's session log should be visible in the workspace"
    assert set(appended.values()) <= BLOCKED_PATH and created in BLOCKED_PATH, (appended, created)


@pytest.fixture
def git_dir(hostile: Hostile) -> Path:
    git = hostile.workspace / ".git"
    (git / "hooks").mkdir(parents=True)
    (git / "hooks" / "pre-commit.sample").write_text("#!/bin/sh\nexit 0\n")
    (git / "config").write_text("[core]\n\trepositoryformatversion = 0\n")
    (git / "HEAD").write_text("ref: refs/heads/main\n")
    return git


def _git_state(git: Path) -> dict[str, str]:
    return {str(path.relative_to(git)): digest(path) for path in sorted(git.rglob("*")) if path.is_file()}


@pytest.mark.asyncio
async def test_git_hooks_cannot_be_planted(hostile: Hostile, git_dir: Path) -> None:
    before = _git_state(git_dir)
    code = """
hook = '#!/bin/sh\\necho pwned > /tmp/' + MARKER + '\\n'
def plant():
    with open('.git/hooks/pre-commit', 'w') as handle:
        handle.write(hook)
    os.chmod('.git/hooks/pre-commit', 0o755)
return {
    'plant_hook': attempt(plant),
    'replace_sample': attempt(lambda: open('.git/hooks/pre-commit.sample', 'w').write(hook)),
    'rename_hooks': attempt(os.rename, '.git/hooks', '.git/hooks-old'),
}
"""
    results = (await hostile.run(code)).ok()
    assert set(results.values()) <= BLOCKED_PATH | {"EBUSY"}, results
    assert _git_state(git_dir) == before


@pytest.mark.asyncio
async def test_git_config_cannot_be_changed(hostile: Hostile, git_dir: Path) -> None:
    before = _git_state(git_dir)
    code = """
evil = '[core]\\n\\tfsmonitor = touch /tmp/' + MARKER + '\\n\\thooksPath = /tmp\\n'
def replace():
    open('config.new', 'w').write(evil)
    os.replace('config.new', '.git/config')
return {
    'append': attempt(lambda: open('.git/config', 'a').write(evil)),
    'replace': attempt(replace),
}
"""
    results = (await hostile.run(code)).ok()
    assert set(results.values()) <= BLOCKED_PATH | {"EBUSY", "EXDEV"}, results
    assert _git_state(git_dir) == before


@pytest.mark.asyncio
async def test_the_git_directory_cannot_be_swapped_for_a_planted_one(hostile: Hostile, git_dir: Path) -> None:
    # Protecting .git/hooks and .git/config is void if the program can move .git away and make its own.
    before = _git_state(git_dir)
    code = """
steps = {'move_git': attempt(os.rename, '.git', '.git-old')}
if steps['move_git'] == 'allowed':
    os.makedirs('.git/hooks')
    steps['new_hook'] = attempt(lambda: open('.git/hooks/pre-commit', 'w').write('#!/bin/sh\\nexit 1\\n'))
    steps['new_config'] = attempt(lambda: open('.git/config', 'w').write('[core]\\n\\tfsmonitor = true\\n'))
return steps
"""
    results = (await hostile.run(code)).ok()
    assert results["move_git"] in BLOCKED_PATH | {"EBUSY"}, results
    assert _git_state(git_dir) == before


@pytest.mark.asyncio
async def test_device_nodes_cannot_be_made(hostile: Hostile) -> None:
    code = """
import stat
return {
    'char_mem': attempt(os.mknod, 'mem', stat.S_IFCHR | 0o666, os.makedev(1, 1)),
    'block_disk': attempt(os.mknod, 'disk', stat.S_IFBLK | 0o666, os.makedev(8, 0)),
    'char_kmsg': attempt(os.mknod, 'kmsg', stat.S_IFCHR | 0o666, os.makedev(1, 11)),
}
"""
    results = (await hostile.run(code)).ok()
    assert results == dict.fromkeys(results, "EPERM"), results
    assert not any((hostile.workspace / name).exists() for name in ("mem", "disk", "kmsg"))


@pytest.mark.asyncio
async def test_host_device_files_are_absent(hostile: Hostile) -> None:
    code = """
names = ['/dev/mem', '/dev/kmem', '/dev/port', '/dev/kmsg', '/dev/sda', '/dev/vda', '/dev/nvme0n1',
         '/dev/mapper/control']
return {name: attempt(lambda: open(name, 'rb').read(1)) for name in names}
"""
    results = (await hostile.run(code)).ok()
    assert set(results.values()) <= BLOCKED_PATH, results


@pytest.mark.asyncio
async def test_host_files_cannot_be_hard_linked(hostile: Hostile) -> None:
    code = """
import sys
sources = ['/etc/ld.so.cache', '/etc/localtime', '/usr/bin/env', os.path.realpath(sys.executable)]
return {source: attempt(os.link, source, 'link-' + os.path.basename(source)) for source in sources}
"""
    results = (await hostile.run(code)).ok()
    assert set(results.values()) <= {"EXDEV", "EPERM"}, results  # the guard checks the hosts' link counts


@pytest.mark.asyncio
async def test_files_the_program_makes_belong_to_the_invoking_user(hostile: Hostile) -> None:
    code = """
open('mine.txt', 'w').write('x')
os.mkdir('mydir')
return {'chown_root': attempt(os.chown, 'mine.txt', 0, 0), 'chown_other': attempt(os.chown, 'mine.txt', 1234, 1234)}
"""
    results = (await hostile.run(code)).ok()
    # EOVERFLOW: the id has no mapping on the workspace's idmapped mount; EPERM: not the program's to give away.
    assert set(results.values()) <= {"EPERM", "EOVERFLOW"}, results
    # gVisor has no idmapped mounts: what its program makes lands owned by the sandbox uid, never root (ADR 0127).
    owner = (os.geteuid(), os.getegid()) if hostile.executor == "bubblewrap" else (SANDBOX_UID, SANDBOX_GID)
    for name in ("mine.txt", "mydir"):
        info = (hostile.workspace / name).stat()
        assert (info.st_uid, info.st_gid) == owner, name


@pytest.mark.asyncio
async def test_the_program_has_an_account_name_but_sees_no_host_account(hostile: Hostile) -> None:
    code = """
import getpass, grp, pwd
me = pwd.getpwuid(os.getuid())
return {'user': getpass.getuser(), 'pw_name': me.pw_name, 'group': grp.getgrgid(os.getgid()).gr_name,
        'accounts': sorted(entry.pw_name for entry in pwd.getpwall()),
        'passwd_write': attempt(lambda: open('/etc/passwd', 'a').write('x'))}
"""
    results = (await hostile.run(code)).ok()
    # Library code asks who it runs as (getpass, pwd): it gets the sandbox's one entry, never the host's files.
    assert (results["user"], results["pw_name"], results["group"]) == ("sandbox", "sandbox", "sandbox"), results
    assert results["accounts"] == ["sandbox"], results
    assert results["passwd_write"] in {"EROFS", "EACCES", "EPERM"}, results
