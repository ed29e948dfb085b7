"""Planted repositories: commands a program leaves in git's files must not run when the user runs git (ADR 0088).

A program under ``workspace-write`` plants a repository (``core.fsmonitor``,
``core.hooksPath``, hooks, a bare repository with ``core.worktree``) by every
route we know: at the top, at depth, by renaming a finished directory into
place, as a symlink, as a ``gitdir:`` file, as a hard link. After the run the
test runs the real ``git`` on the host where the plant aims and asserts that
the planted command did not run; repositories that existed before the run
stay read-only.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from .conftest import Hostile

pytestmark = [
    pytest.mark.needs_bwrap,
    pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed: the plants cannot be checked"),
]

PLANT = """
import subprocess
RAN = {ran!r}
def repository(gitdir, *, bare=False):
    for sub in ('objects', 'refs/heads', 'hooks'):
        os.makedirs(gitdir + '/' + sub, exist_ok=True)
    open(gitdir + '/HEAD', 'w').write('ref: refs/heads/main\\n')
    worktree = '\\tworktree = ..\\n' if bare else ''
    open(gitdir + '/config', 'w').write(
        '[core]\\n\\trepositoryformatversion = 0\\n\\tbare = false\\n' + worktree
        + '\\tfsmonitor = "touch ' + RAN + '/fsmonitor-' + gitdir.replace('/', '_') + '; false"\\n'
        + '\\thooksPath = ' + os.path.abspath(gitdir) + '/hooks\\n'
    )
    for hook in ('post-checkout', 'post-index-change', 'pre-auto-gc', 'reference-transaction'):
        path = gitdir + '/hooks/' + hook
        open(path, 'w').write('#!/bin/sh\\ntouch ' + RAN + '/hook-' + hook + '\\n')
        os.chmod(path, 0o755)
"""


def host_git(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The user's ``git`` on the host, with no global or system configuration (not the test machine's)."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(cwd),
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CEILING_DIRECTORIES": str(cwd.parents[-2]),
        "GIT_AUTHOR_NAME": "user",
        "GIT_AUTHOR_EMAIL": "user@example.invalid",
        "GIT_COMMITTER_NAME": "user",
        "GIT_COMMITTER_EMAIL": "user@example.invalid",
        "GIT_PAGER": "",
        "LANG": "C.UTF-8",
    }
    return subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120, check=False)


def use_git_everywhere(workspace: Path) -> None:
    """What a user (a shell prompt, an editor) does in each directory of the workspace afterwards."""
    for directory, subdirectories, _ in os.walk(workspace):
        host_git(Path(directory), "status")
        host_git(Path(directory), "checkout", "-q", "-b", "after-the-run")
        subdirectories[:] = [name for name in subdirectories if name != ".git"]


@pytest.fixture
def ran(tmp_path: Path) -> Path:
    """Where a planted command leaves its trace (outside the workspace; nothing else writes there)."""
    directory = tmp_path / "planted-commands-ran"
    directory.mkdir()
    return directory


ROUTES = {
    "top": "repository('.git')",
    "depth": "os.makedirs('a/b', exist_ok=True); repository('a/b/.git')",
    "renamed-into-place": "repository('x/.git'); os.rename('x/.git', '.git')",
    "renamed-parent": "os.makedirs('d', exist_ok=True); repository('d/tree'); os.rename('d/tree', 'd/.git')",
    "symlink": "repository('store'); os.symlink('store', '.git')",
    "gitdir-file": "repository('elsewhere'); open('.git', 'w').write('gitdir: elsewhere\\n')",
    "hard-link": "repository('e2'); open('link-src', 'w').write('gitdir: e2\\n'); os.link('link-src', '.git')",
    "upper-case": "os.makedirs('c', exist_ok=True); repository('c/.GIT'); os.rename('c/.GIT', 'c/.git')",
    "bare-with-worktree": "os.makedirs('w', exist_ok=True); repository('w/evil', bare=True)",
    "bare-at-top": "repository('.', bare=True)",
}


@pytest.mark.asyncio
@pytest.mark.parametrize("route", sorted(ROUTES))
async def test_a_planted_repository_runs_nothing_on_the_host(hostile: Hostile, ran: Path, route: str) -> None:
    code = PLANT.format(ran=str(ran)) + ROUTES[route] + "\nreturn sorted(os.listdir('.'))\n"
    listed = (await hostile.run(code)).ok()
    assert listed, "the program planted nothing"
    use_git_everywhere(hostile.workspace)
    assert sorted(os.listdir(ran)) == [], f"planted commands ran on the host ({route})"


@pytest.mark.asyncio
async def test_a_repository_made_with_real_git_in_the_sandbox_runs_no_hook(hostile: Hostile, ran: Path) -> None:
    # A real repository with a commit (so that checkout runs post-checkout), made by git inside the sandbox.
    code = (
        PLANT.format(ran=str(ran))
        + """
os.makedirs('sub')
env = {'PATH': '/usr/bin:/bin', 'HOME': '/tmp', 'GIT_CONFIG_NOSYSTEM': '1'}
def git(*args):
    return subprocess.run(['git', '-c', 'user.name=p', '-c', 'user.email=p@x', *args], cwd='sub', env=env,
                          capture_output=True, text=True).returncode
steps = [git('init', '-q', '-b', 'main'), git('commit', '-q', '--allow-empty', '-m', 'planted')]
repository('sub/.git')  # hooks, hooksPath and fsmonitor over the real repository
return steps
"""
    )
    assert (await hostile.run(code)).ok() == [0, 0]
    use_git_everywhere(hostile.workspace)
    assert sorted(os.listdir(ran)) == []


@pytest.fixture
def repositories(hostile: Hostile) -> list[Path]:
    """The user's own repositories in the workspace before the run: one at the top, one nested two deep."""
    top, nested = hostile.workspace, hostile.workspace / "vendor" / "lib"
    nested.mkdir(parents=True)
    for where in (top, nested):
        assert host_git(where, "init", "-q", "-b", "main").returncode == 0
        assert host_git(where, "commit", "-q", "--allow-empty", "-m", "user").returncode == 0
    return [top, nested]


@pytest.mark.asyncio
async def test_existing_repositories_at_any_depth_stay_read_only(
    hostile: Hostile, ran: Path, repositories: list[Path]
) -> None:
    configs = {where: (where / ".git" / "config").read_bytes() for where in repositories}
    code = (
        PLANT.format(ran=str(ran))
        + """
results = {}
for gitdir in ('.git', 'vendor/lib/.git'):
    results[gitdir + ' config'] = attempt(lambda: open(gitdir + '/config', 'a').write('[core]\\n\\tfsmonitor = x\\n'))
    results[gitdir + ' hook'] = attempt(lambda: open(gitdir + '/hooks/post-checkout', 'w').write('#!/bin/sh\\n'))
    results[gitdir + ' rename'] = attempt(os.rename, gitdir, gitdir + '-old')
    results[gitdir + ' link'] = attempt(os.link, gitdir + '/config', 'linked-config')
results['vendor rename'] = attempt(os.rename, 'vendor', 'vendor-old')
results['lib rename'] = attempt(os.rename, 'vendor/lib', 'vendor/lib-old')
return results
"""
    )
    results = (await hostile.run(code)).ok()
    for gitdir in (".git", "vendor/lib/.git"):
        assert results[f"{gitdir} config"] == "EROFS", results
        assert results[f"{gitdir} hook"] == "EROFS", results
        assert results[f"{gitdir} rename"] == "EBUSY", results
        assert results[f"{gitdir} link"] == "EXDEV", results
    assert results["vendor rename"] == "EBUSY", results
    assert results["lib rename"] == "EBUSY", results
    assert {where: (where / ".git" / "config").read_bytes() for where in repositories} == configs
    use_git_everywhere(hostile.workspace)
    assert sorted(os.listdir(ran)) == []
