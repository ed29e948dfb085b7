"""Locked access to the user config file for writers (``ptc-plus mcp add --user``, ``mcp trust``).

The same discipline as the workspace file (:mod:`.workspace_file`): writers
serialize on an ``flock`` of the file's directory (no lock file is left), the
file is read and atomically replaced relative to that directory's descriptor,
and its permission bits are kept. The directory is created when missing.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

from hookspecs.workspace_files import WorkspacePathError
from ptc_plus.config.errors import ConfigEditRefused, ConfigError
from ptc_plus.config.workspace_file import LockedConfigFile


@contextlib.contextmanager
def locked_user_file(path: Path) -> Iterator[LockedConfigFile]:
    """``path`` (the user file) under its directory's lock, the directory created if missing.

    :raises ConfigEditRefused: the directory cannot be created or opened, or a system call failed.
    """
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        directory = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            fcntl.flock(directory, fcntl.LOCK_EX)
            yield LockedConfigFile(path=path, directory=directory, name=path.name)
        finally:
            os.close(directory)  # releases the lock
    except WorkspacePathError as exc:
        raise ConfigEditRefused(file=str(path), detail=str(exc)) from None
    except ConfigError:
        raise
    except OSError as exc:
        raise ConfigEditRefused(file=str(path), detail=exc.strerror or str(exc)) from None
