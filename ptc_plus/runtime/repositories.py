"""Repositories in a workspace: found before a run, protected, and any a program planted disarmed after it (ADR 0088).

Version-control tools run commands from a repository's own files without
asking: git runs ``core.fsmonitor``, ``core.pager``, hooks and filter drivers
from ``.git`` whenever someone (a shell prompt, an editor) runs it there, and
files a ``workspace-write`` program creates belong to the invoking user, so
git's ownership check (``safe.directory``) trusts them. A :data:`REPOSITORY_NAMES`
entry (file, directory or symlink, at any depth; compared case-insensitively
for case-folding filesystems) and a directory shaped as a bare git repository
(``HEAD``, ``objects`` and ``refs`` side by side: git takes it for one when
run inside it, and ``core.worktree`` gives it a work tree) are *repositories*.

:func:`census` lists those present before a run: the sandbox binds them
read-only (:mod:`ptc_plus.runtime.protected`). :func:`sweep`, run when the
run's processes are gone, disarms every repository that was not there before:
an entry with a repository name is renamed to ``<name>.ptc-quarantined-<n>``
(never replacing anything), and a bare-shaped directory's ``HEAD`` to
``HEAD.ptc-quarantined`` (a renamed ``.git`` directory is bare-shaped
itself). No name matching exists in seccomp or Landlock, so the check is the
host's, after the fact; what that leaves open is in ADR 0088.

Both walk beneath the workspace descriptor, one directory at a time, never
following a symlink; they hold one descriptor, climb back with ``..`` and
check that it is the directory they came from (a concurrent run in the same
workspace may move directories meanwhile: the walk then starts over, a few
times at most), so nesting depth costs no descriptors.
"""

from __future__ import annotations

import ctypes
import errno
import logging
import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path

import attrs

from hookspecs.workspace_files import WorkspacePathError, workspace_root

REPOSITORY_NAMES = frozenset({".git", ".hg", ".jj"})
"""Entries whose contents git, Mercurial and Jujutsu read (and run commands from) without asking (ADR 0088)."""

BARE_SHAPE = frozenset({"HEAD", "objects", "refs"})
"""What makes git take a directory for a bare repository (``is_git_directory`` in git's ``setup.c``)."""

QUARANTINE_SUFFIX = ".ptc-quarantined"

_RESTARTS = 3
_RENAME_NOREPLACE = 1
_DIRECTORY_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC

_log = logging.getLogger(__name__)
_libc = ctypes.CDLL(None, use_errno=True)


@attrs.frozen(kw_only=True)
class Repository:
    """One repository entry: where (relative to the workspace) and which inode (``st_dev``, ``st_ino``)."""

    parts: tuple[str, ...]
    identity: tuple[int, int]
    bare: bool


@attrs.frozen(kw_only=True)
class Census:
    """The repositories present in a workspace at one moment (see :func:`census`)."""

    workspace: Path
    repositories: frozenset[Repository]

    @property
    def paths(self) -> tuple[Path, ...]:
        """Their absolute paths, sorted."""
        return tuple(sorted(self.workspace.joinpath(*entry.parts) for entry in self.repositories))


class WalkRaced(Exception):
    """A directory moved while the walk was inside it; the walk starts over."""


def is_repository_name(name: str) -> bool:
    return name.lower() in REPOSITORY_NAMES


def census(workspace: Path) -> Census:
    """The repositories in ``workspace`` now (a missing or unreadable workspace has none).

    A repository's own contents are not walked (``.git/objects`` can be most
    of a workspace): the run cannot change them, they are bound read-only.
    """
    found: set[Repository] = set()

    def visit(fd: int, parts: tuple[str, ...], listing: _Listing) -> bool:
        for entry in listing.repositories:
            info = entry.stat(follow_symlinks=False)
            found.add(Repository(parts=(*parts, entry.name), identity=_identity(info), bare=False))
        if listing.bare:
            found.add(Repository(parts=parts, identity=_identity(os.fstat(fd)), bare=True))
            return not parts  # the workspace itself may be shaped so; its contents are still the workspace's
        return True

    _walk(workspace, visit, found.clear)
    return Census(workspace=workspace, repositories=frozenset(found))


def sweep(workspace: Path, before: Census) -> tuple[Path, ...]:
    """Disarm every repository in ``workspace`` that ``before`` did not list; what was renamed, as absolute paths.

    Call it only when no program of the run can act any more (its processes
    are gone): then nothing races the renames. Each is logged as a warning.
    """
    known = {(entry.parts, entry.identity) for entry in before.repositories}
    disarmed: list[Path] = []

    def visit(fd: int, parts: tuple[str, ...], listing: _Listing) -> bool:
        for entry in listing.repositories:
            try:
                info = entry.stat(follow_symlinks=False)
            except FileNotFoundError:
                continue
            if ((*parts, entry.name), _identity(info)) in known:
                continue  # read-only during the run: unchanged
            renamed = _fresh_quarantine(fd, entry.name)
            if renamed is None:
                continue
            disarmed.append(workspace.joinpath(*parts, entry.name))
            _log.warning("disarmed a repository a program planted: %s (now %s)", disarmed[-1], renamed)
            if stat.S_ISDIR(info.st_mode):
                _walk_from(fd, renamed, (*parts, renamed), visit)  # itself bare-shaped now, and what it holds
        if listing.bare:
            if (parts, _identity(os.fstat(fd))) in known:
                return not parts
            head = _fresh_quarantine(fd, "HEAD")
            if head is not None:
                disarmed.append(workspace.joinpath(*parts, "HEAD"))
                _log.warning("disarmed a bare repository a program planted: %s (now %s)", disarmed[-1], head)
        return True

    _walk(workspace, visit, lambda: None)  # a restart keeps what was renamed already
    return tuple(disarmed)


@attrs.frozen
class _Listing:
    """One directory's entries as the walk needs them, read in one pass."""

    repositories: list[os.DirEntry[str]]
    """Entries with a repository name, of any type."""
    subdirectories: list[str]
    """The other entries that are directories (not symlinks to one)."""
    bare: bool


_Visit = Callable[[int, tuple[str, ...], _Listing], bool]
"""Sees a directory (its descriptor, its path below the workspace, its listing); answers whether to go into it."""

_HELD = 64
"""Directories this close to where the walk started keep their descriptor while the walk is below them."""


def _walk(workspace: Path, visit: _Visit, reset: Callable[[], None]) -> None:
    for _ in range(_RESTARTS):
        reset()
        try:
            with workspace_root(workspace) as root_fd:
                _walk_fd(os.dup(root_fd), (), visit)
            return
        except WalkRaced:
            continue
        except (OSError, WorkspacePathError) as error:
            _log.warning("could not walk %s for repositories: %s", workspace, error)
            return
    _log.warning("directories in %s kept moving while it was walked for repositories", workspace)


def _walk_from(parent_fd: int, name: str, parts: tuple[str, ...], visit: _Visit) -> None:
    fd = _open_directory(parent_fd, name)
    if fd is not None:
        _walk_fd(fd, parts, visit)


class _Frame:
    """A directory the walk is below: its remaining subdirectories, and how to get back to it."""

    __slots__ = ("held", "identity", "pending")

    def __init__(self, pending: Iterator[str]) -> None:
        self.pending = pending
        self.held: int | None = None
        self.identity: tuple[int, int] | None = None


def _walk_fd(fd: int, parts: tuple[str, ...], visit: _Visit) -> None:
    """Visit the directory open at ``fd`` (taken over and closed) and everything beneath it, depth first.

    The first :data:`_HELD` levels keep their descriptors; deeper ones are
    left and found again through ``..``, checked against the inode the walk
    came down from (:class:`WalkRaced` when it differs), so depth costs no
    descriptors.
    """
    frames: list[_Frame] = []
    try:
        while True:
            listing = _listing(fd)
            frames.append(_Frame(iter(listing.subdirectories if visit(fd, parts, listing) else ())))
            while True:
                frame = frames[-1]
                name = next(frame.pending, None)
                if name is not None:
                    child = _open_directory(fd, name)
                    if child is None:
                        continue
                    if len(frames) <= _HELD:
                        frame.held = fd
                    else:
                        frame.identity = _identity(os.fstat(fd))
                        os.close(fd)
                    fd, parts = child, (*parts, name)
                    break
                frames.pop()
                if not frames:
                    return
                parent = frames[-1]
                if parent.held is not None:
                    os.close(fd)
                    fd, parent.held = parent.held, None
                else:
                    up = os.open("..", _DIRECTORY_FLAGS, dir_fd=fd)
                    os.close(fd)
                    fd = up
                    if _identity(os.fstat(fd)) != parent.identity:
                        raise WalkRaced()
                parts = parts[:-1]
    finally:
        os.close(fd)
        for frame in frames:
            if frame.held is not None:
                os.close(frame.held)


def _listing(fd: int) -> _Listing:
    repositories: list[os.DirEntry[str]] = []
    subdirectories: list[str] = []
    shape: set[str] = set()
    try:
        with os.scandir(fd) as entries:
            for entry in entries:
                name = entry.name
                if name[0] == "." and name.lower() in REPOSITORY_NAMES:
                    repositories.append(entry)
                    continue
                if name in BARE_SHAPE:
                    shape.add(name)
                if entry.is_dir(follow_symlinks=False):
                    subdirectories.append(name)
    except OSError:
        pass  # unreadable (not ours) or gone: nothing a program of ours put there
    return _Listing(repositories=repositories, subdirectories=subdirectories, bare=shape == BARE_SHAPE)


def _open_directory(parent_fd: int, name: str) -> int | None:
    try:
        return os.open(name, _DIRECTORY_FLAGS, dir_fd=parent_fd)
    except OSError as error:
        if error.errno in (errno.ENOENT, errno.ENOTDIR, errno.ELOOP, errno.EACCES, errno.EPERM):
            return None  # gone, replaced by a non-directory or a symlink, or not ours to read
        raise


def _fresh_quarantine(fd: int, name: str) -> str | None:
    """Rename ``name`` to the first free ``<name>.ptc-quarantined-<n>``; the new name (``None``: it could not)."""
    for number in range(1, 1000):
        candidate = f"{name}{QUARANTINE_SUFFIX}-{number}"
        result = _rename_noreplace(fd, name, candidate)
        if result == 0:
            return candidate
        if result != errno.EEXIST:
            if result != errno.ENOENT:
                _log.warning("could not disarm %s: %s", name, os.strerror(result))
            return None
    return None


def _rename_noreplace(fd: int, name: str, new_name: str) -> int:
    """``renameat2(RENAME_NOREPLACE)`` within the directory open at ``fd``: 0, or the errno."""
    if _libc.renameat2(fd, name.encode(), fd, new_name.encode(), _RENAME_NOREPLACE) == 0:
        return 0
    return ctypes.get_errno()


def _identity(info: os.stat_result) -> tuple[int, int]:
    return (info.st_dev, info.st_ino)
