"""Repositories found before a run and disarmed after it (ADR 0088): the walk itself, without a sandbox.

The hostile suite (``hostile/test_repositories.py``) plants through a real
sandbox and checks with the host's real git; these tests pin the walk's
edges: depth beyond the descriptors it holds, symlinks it must not follow,
a directory moved under it, names it must never replace.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ptc_plus.runtime import repositories
from ptc_plus.runtime.repositories import census, sweep


def bare(directory: Path) -> Path:
    for name in ("objects", "refs"):
        (directory / name).mkdir(parents=True)
    (directory / "HEAD").write_text("ref: refs/heads/main\n")
    return directory


def test_existing_repositories_are_listed_and_left_alone(workspace: Path) -> None:
    (workspace / ".git").mkdir()
    (workspace / "vendor" / "lib" / ".git").mkdir(parents=True)
    (workspace / "sub").mkdir()
    (workspace / "sub" / ".git").write_text("gitdir: ../.git/modules/sub\n")
    bare(workspace / "fixtures" / "repo.git")
    (workspace / "elsewhere" / ".hg").mkdir(parents=True)
    before = census(workspace)
    assert before.paths == tuple(
        workspace / path for path in (".git", "elsewhere/.hg", "fixtures/repo.git", "sub/.git", "vendor/lib/.git")
    )
    assert sweep(workspace, before) == ()
    assert census(workspace) == before


def test_planted_ones_are_renamed_at_any_depth_and_never_replace_anything(workspace: Path) -> None:
    before = census(workspace)
    deep = workspace.joinpath(*["d"] * (repositories._HELD + 40))  # deeper than the descriptors the walk holds
    (deep / ".git").mkdir(parents=True)
    (workspace / ".GIT").mkdir()
    (workspace / ".git.ptc-quarantined-1").write_text("the program's own file, kept\n")
    os.symlink("/", workspace / ".jj")
    bare(workspace / "w" / "evil")
    bare(workspace / "a" / ".hg" / "modules" / "x")  # nested inside a planted one: disarmed after its rename
    disarmed = sweep(workspace, before)
    assert sorted(disarmed) == sorted(
        [
            deep / ".git",
            workspace / ".GIT",
            workspace / ".jj",
            workspace / "w" / "evil" / "HEAD",
            workspace / "a" / ".hg",
            workspace / "a" / ".hg.ptc-quarantined-1" / "modules" / "x" / "HEAD",
        ]
    )
    assert (deep / ".git.ptc-quarantined-1").is_dir()
    assert (workspace / ".git.ptc-quarantined-1").read_text() == "the program's own file, kept\n"
    assert (workspace / ".GIT.ptc-quarantined-1").is_dir()
    assert os.readlink(workspace / ".jj.ptc-quarantined-1") == "/"
    assert (workspace / "w" / "evil" / "HEAD.ptc-quarantined-1").is_file()
    assert census(workspace).repositories == frozenset()
    assert sweep(workspace, before) == ()


def test_symlinked_directories_are_not_walked(workspace: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    (outside / ".git").mkdir(parents=True)
    os.symlink(outside, workspace / "link")
    assert census(workspace).repositories == frozenset()
    assert sweep(workspace, census(workspace)) == ()
    assert (outside / ".git").is_dir()


def test_a_directory_moved_under_a_deep_walk_restarts_it(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    depth = repositories._HELD + 5
    chain = workspace.joinpath(*[f"d{level}" for level in range(depth)])
    (chain / ".git").mkdir(parents=True)
    before = census(workspace)
    (chain / "inner" / ".git").mkdir(parents=True)
    listing = repositories._listing
    moved: list[bool] = []
    root_listings: list[bool] = []

    def moving_listing(fd: int) -> repositories._Listing:
        result = listing(fd)
        if os.path.samestat(os.fstat(fd), os.stat(workspace)):
            root_listings.append(True)
        if not moved and os.path.samestat(os.fstat(fd), os.stat(chain / "inner")):
            # A concurrent run moves the directory the walk is in: ".." now leads to the workspace, not its parent.
            os.rename(chain / "inner", workspace / "inner")
            moved.append(True)
        return result

    monkeypatch.setattr(repositories, "_listing", moving_listing)
    [disarmed] = sweep(workspace, before)  # named where it was found, before the move
    assert disarmed.name == ".git"
    assert moved == [True]
    assert len(root_listings) == 2, "the walk did not start over"
    assert (workspace / "inner" / ".git.ptc-quarantined-1").is_dir()
    assert (chain / ".git").is_dir()
