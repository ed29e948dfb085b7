"""Locked, beneath-the-workspace access to ``<workspace>/.ptc-plus/config.toml`` for writers.

A program running in the workspace may race this host-side code with
symlinks, so the file is reached through :mod:`hookspecs.workspace_files`
(ADR 0050): ``.ptc-plus`` is opened beneath the workspace without following
symlinks, the file is read and replaced relative to that directory's
descriptor, and a symlink, FIFO or directory at the file's place is refused
or replaced, never followed.

Writers serialize on an ``flock`` of the opened ``.ptc-plus`` directory
itself, so no lock file is ever created (one used to be left behind in the
user's workspace). Removing a lock file after use would not be safe: a
waiter that opened the old file before the unlink would lock an inode no
newcomer sees. A directory lock has no such file. The lock is advisory and
released when the descriptor closes, also when the process dies.

A new file gets ``0o666`` minus the umask (``0644`` usually); a replaced
file keeps its permission bits (ADR 0062).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import attrs

from hookspecs.workspace_files import (
    PathNotFound,
    WorkspacePathError,
    open_directory,
    open_file,
    replace_file,
    workspace_root,
)
from ptc_plus.config.errors import ConfigEditRefused, ConfigError
from ptc_plus.config.issues import ConfigIssue
from ptc_plus.config.paths import FILE_NAME, WORKSPACE_DIR, workspace_config_file
from ptc_plus.config.source import MAX_BYTES, ConfigText, config_from_bytes

_NEW_FILE_MODE = 0o666


@attrs.define
class LockedConfigFile:
    """A config file while its directory is locked: read it, then replace it."""

    path: Path
    directory: int
    mode: int | None = None
    name: str = FILE_NAME
    """The file's name in ``directory`` (the user file may be named otherwise in tests)."""

    def read(self) -> ConfigText | None:
        """The file's text and data; ``None`` when it does not exist.

        :raises ConfigError: it is not readable, not UTF-8 or not TOML (the loader's messages).
        """
        try:
            fd = open_file(self.directory, self.name)
        except PathNotFound:
            return None
        try:
            self.mode = stat.S_IMODE(os.fstat(fd).st_mode)
            with os.fdopen(fd, "rb", closefd=False) as handle:
                raw = handle.read(MAX_BYTES + 1)
        finally:
            os.close(fd)
        found = config_from_bytes(raw, str(self.path))
        if isinstance(found, ConfigIssue):
            raise found.to_error()
        return found

    def exists(self) -> bool:
        """Whether the file is there (a regular file; anything else at its place is refused)."""
        try:
            fd = open_file(self.directory, self.name)
        except PathNotFound:
            return False
        try:
            self.mode = stat.S_IMODE(os.fstat(fd).st_mode)
        finally:
            os.close(fd)
        return True

    def write(self, text: str) -> None:
        """Replace the file atomically with ``text``, keeping the permission bits :meth:`read`/:meth:`exists` saw."""
        mode = self.mode if self.mode is not None else _NEW_FILE_MODE
        replace_file(self.directory, self.name, text.encode("utf-8"), create_parents=False, mode=mode)
        if self.mode is not None:
            self._restore_mode(self.mode)

    def _restore_mode(self, mode: int) -> None:
        # The new file was created with ``mode`` minus the umask, never more: put back bits the umask took.
        with contextlib.suppress(WorkspacePathError):
            fd = open_file(self.directory, self.name)
            try:
                if stat.S_IMODE(os.fstat(fd).st_mode) != mode:
                    os.fchmod(fd, mode)
            finally:
                os.close(fd)


@contextlib.contextmanager
def locked_workspace_file(workspace: Path, *, create: bool) -> Iterator[LockedConfigFile | None]:
    """The workspace file under the ``.ptc-plus`` directory lock; ``None`` when that directory is missing
    and ``create`` is false.

    :raises ConfigEditRefused: the workspace or ``.ptc-plus`` cannot be used safely (missing workspace, a
        symlink, not a directory), or a system call failed.
    """
    path = workspace_config_file(workspace)
    try:
        with workspace_root(workspace) as root:
            try:
                directory = open_directory(root, WORKSPACE_DIR, create=create)
            except PathNotFound:
                if create:
                    raise
                yield None
                return
            try:
                fcntl.flock(directory, fcntl.LOCK_EX)
                yield LockedConfigFile(path=path, directory=directory)
            finally:
                os.close(directory)  # releases the lock
    except WorkspacePathError as exc:
        raise ConfigEditRefused(file=str(path), detail=str(exc)) from None
    except ConfigError:
        raise
    except OSError as exc:  # permission denied, a full disk: said plainly, never a traceback
        raise ConfigEditRefused(file=str(path), detail=exc.strerror or str(exc)) from None
