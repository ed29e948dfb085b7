"""Paths inside the workspace that a confined program must never change (ADR 0040, ADR 0050).

A ``workspace-write`` program may write its workspace, but not the state the
host and the plugin keep there: the plugin's own configuration
(``<workspace>/.ptc-plus``, which could otherwise switch the policy to
``danger-full-access`` for the next run; the session hands its name to
:class:`~ptc_plus.runtime.CodeRuntime`, the runtime does not read config),
whatever the host lists in :attr:`~hookspecs.HostServices.protected_paths`
(its session logs, spill files, its tools' stores), and the repository's git
state (``<workspace>/.git``: hooks and configuration that git runs on the host
the next time someone uses it), and every other repository found in the
workspace at any depth (``a/b/.git``, ``.hg``, bare repositories: see
:mod:`ptc_plus.runtime.repositories`, ADR 0088). :func:`protected_paths` picks those that lie
inside the workspace and creates missing ones — except ``.git`` — as empty
directories, so that the sandbox can bind each read-only over the writable
workspace (a missing path could otherwise be created by the program, e.g.
as a symlink, before the host first uses it).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from hookspecs.workspace_files import WorkspacePathError, open_directory, workspace_root

GIT_DIR = ".git"
"""Protected whole, and only when present (a directory, or a worktree's or submodule's ``gitdir:`` file)."""


def protected_paths(
    workspace: Path,
    host_paths: Iterable[Path | str] = (),
    *,
    create: bool = True,
    repositories: Iterable[Path] = (),
) -> tuple[Path, ...]:
    """The resolved, existing paths to bind read-only for runs in ``workspace`` (absolute, resolved).

    ``<workspace>/.git`` when it exists (never created: a workspace that is
    no repository is not made one); plus each of ``host_paths`` (relative
    ones are taken inside the workspace, e.g. the plugin's ``.ptc-plus``)
    that lies inside the workspace, and each of ``repositories`` (existing
    ones found by :func:`~ptc_plus.runtime.repositories.census`, never
    created) (others are
    not visible to a confined program at all). Missing ones other than
    ``.git`` are created as empty directories here, on the host side, when
    ``create`` (a ``read-only`` program cannot create them: they are left
    missing and not listed); creation walks beneath the workspace and never
    goes through a symlink, so it cannot create anything outside.
    A path that resolves outside the workspace (a symlink leading out) is
    skipped: the sandbox does not mount its target. Sorted, without
    duplicates or paths nested in another listed path.
    """
    found: set[Path] = set()
    candidates = [(workspace / GIT_DIR, False)]
    candidates += [(Path(path), False) for path in repositories]
    candidates += [(Path(path), True) for path in host_paths]
    for path, creatable in candidates:
        candidate = Path(os.path.normpath(workspace / path))  # an absolute path replaces workspace
        if not _inside(candidate, workspace):
            continue
        if create and creatable and not os.path.lexists(candidate):
            _create_beneath(workspace, candidate)
        if not os.path.lexists(candidate):
            continue
        resolved = candidate.resolve()
        if resolved != workspace and _inside(resolved, workspace) and resolved.exists():
            found.add(resolved)
    ordered = sorted(found)
    return tuple(path for path in ordered if not any(other != path and _inside(path, other) for other in ordered))


def _create_beneath(workspace: Path, directory: Path) -> None:
    """Create ``directory`` and its missing parents inside ``workspace``, never through a symlink."""
    try:
        with workspace_root(workspace) as root_fd:
            os.close(open_directory(root_fd, directory.relative_to(workspace), create=True))
    except (WorkspacePathError, OSError):
        pass  # a symlink, a file or a race on the way: leave it missing, and so unlisted or skipped below


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents
