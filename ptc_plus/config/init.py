"""``config init``: write the starter file (:mod:`.starter`) as the workspace or the user file.

An existing file is never replaced unless ``force`` is given. The workspace
file is written beneath the workspace under the directory lock
(:mod:`.workspace_file`); the user file, which no program can reach, by plain
atomic replace. Either gets ``0o666`` minus the umask when new, and keeps its
permission bits when replaced.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from collections.abc import Mapping
from pathlib import Path

from ptc_plus.config.errors import ConfigEditRefused, ConfigFileExists
from ptc_plus.config.paths import Scope, user_config_file
from ptc_plus.config.starter import starter_text
from ptc_plus.config.workspace_file import locked_workspace_file


def init_config(
    scope: Scope, *, workspace: Path | None = None, env: Mapping[str, str] | None = None, force: bool = False
) -> Path:
    """Write the starter file for ``scope`` and return its path.

    ``workspace`` is required for :attr:`Scope.WORKSPACE` (an existing directory);
    ``env`` locates the user file (:func:`.user_config_file`).

    :raises ConfigFileExists: the file exists and ``force`` is false.
    :raises ConfigEditRefused: the file cannot be written (a symlinked ``.ptc-plus``, permissions, a full disk).
    """
    text = starter_text(scope)
    if scope is Scope.WORKSPACE:
        if workspace is None:
            raise ValueError("init_config(Scope.WORKSPACE) needs a workspace")
        with locked_workspace_file(workspace, create=True) as locked:
            assert locked is not None  # create=True: the directory is there or an error was raised
            if locked.exists() and not force:
                raise ConfigFileExists(file=str(locked.path))
            locked.write(text)
            return locked.path
    path = user_config_file(env)
    try:
        _write_user_file(path, text, force=force)
    except FileExistsError:
        raise ConfigFileExists(file=str(path)) from None
    except OSError as exc:
        raise ConfigEditRefused(file=str(path), detail=exc.strerror or str(exc)) from None
    return path


def _write_user_file(path: Path, text: str, *, force: bool) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if not force:
        with open(path, "x", encoding="utf-8") as handle:  # "x": O_EXCL, never replaces
            handle.write(text)
        return
    try:
        mode: int | None = stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        mode = None
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
    try:
        if mode is not None:
            os.fchmod(fd, mode)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise
