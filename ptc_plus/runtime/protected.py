"""Paths inside the workspace that a confined program must never change (ADR 0040).

A ``workspace-write`` program may write its workspace, but not the state the
host and the plugin keep there: the plugin's own configuration
(``<workspace>/.ptc-plus``, which could otherwise switch the policy to
``danger-full-access`` for the next run) and whatever the host lists in
:attr:`~hookspecs.HostServices.protected_paths` (its session logs, spill
files). :func:`protected_paths` picks those that lie inside the workspace and
creates missing ones as empty directories, so that the sandbox can bind each
read-only over the writable workspace (a missing path could otherwise be
created by the program, e.g. as a symlink, before the host first uses it).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable
from pathlib import Path

from ptc_plus.config.paths import WORKSPACE_DIR


def protected_paths(workspace: Path, host_paths: Iterable[Path] = (), *, create: bool = True) -> tuple[Path, ...]:
    """The resolved, existing paths to bind read-only for runs in ``workspace`` (absolute, resolved).

    Always ``<workspace>/.ptc-plus``, plus each of ``host_paths`` that lies inside
    the workspace (others are not visible to a confined program at all).
    Missing ones are created as empty directories here, on the host side,
    when ``create`` (a ``read-only`` program cannot create them: they are
    left missing and not listed).
    A path that resolves outside the workspace (a symlink leading out) is
    skipped: the sandbox does not mount its target. Sorted, without
    duplicates or paths nested in another listed path.
    """
    found: set[Path] = set()
    for path in (workspace / WORKSPACE_DIR, *host_paths):
        candidate = Path(path)
        candidate = Path(os.path.normpath(workspace / candidate))  # an absolute path replaces workspace
        if not _inside(candidate, workspace):
            continue
        if create and not candidate.exists() and not candidate.is_symlink():
            with contextlib.suppress(FileExistsError):
                candidate.mkdir(parents=True)
        resolved = candidate.resolve()
        if resolved != workspace and _inside(resolved, workspace) and resolved.exists():
            found.add(resolved)
    ordered = sorted(found)
    return tuple(path for path in ordered if not any(other != path and _inside(path, other) for other in ordered))


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents
