"""``config init``: write the starter file (:mod:`.starter`) as the workspace or the user file.

An existing file is never replaced unless ``force`` is given. The workspace
file is written beneath the workspace under the directory lock
(:mod:`.workspace_file`); the user file under its directory's lock
(:mod:`.user_file`), the lock every editor of it takes. Either is replaced
atomically and gets ``0o666`` minus the umask when new, and keeps its
permission bits when replaced.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from ptc_plus.config.errors import ConfigFileExists
from ptc_plus.config.paths import Scope, user_config_file
from ptc_plus.config.starter import starter_text
from ptc_plus.config.user_file import locked_user_file
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
    # the user file's directory lock, as every editor of it takes: a page's save racing a forced init
    # either sees the starter text (and is refused as a conflict) or is replaced after it, never lost half-way
    with locked_user_file(user_config_file(env)) as locked:
        if locked.exists() and not force:
            raise ConfigFileExists(file=str(locked.path))
        locked.write(text)
        return locked.path
