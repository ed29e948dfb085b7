"""Set the workspace file's management switch only if it still holds what the caller saw (ADR 0126).

The settings page loads the file, the user chooses, and the save happens later: meanwhile the CLI or
another tab may have edited the same key. The save therefore names the value it saw (``expected``) and is
refused, under the same lock and atomic replace as :func:`.set_capability`, when the file now says
something else. Comments and layout survive as in every editor of this package (tomlkit).
"""

from __future__ import annotations

from pathlib import Path

import tomlkit
from tomlkit.items import Table

from ptc_plus.config.editor import EditResult, _parse
from ptc_plus.config.errors import ConfigEditConflict, ConfigEditRefused
from ptc_plus.config.keys import toml_literal
from ptc_plus.config.paths import workspace_config_file
from ptc_plus.config.workspace_file import locked_workspace_file

SWITCH = ("management", "enabled")
"""The key this editor sets."""


def set_management_enabled(workspace: Path, enabled: bool, *, expected: bool | None) -> EditResult:
    """Write ``[management] enabled = <enabled>`` to the workspace file if it now holds ``expected``
    (``None``: not set); ``previous`` is that value as TOML (``None``: not set).

    :raises ConfigEditConflict: the file holds another value (``theirs``: TOML, ``""`` when not set); nothing
        is written.
    :raises ConfigEditRefused: ``management`` is not a table, or the workspace cannot be edited safely.
    """
    path = workspace_config_file(workspace)
    with locked_workspace_file(workspace, create=True) as locked:
        assert locked is not None  # create=True: the directory exists or was made
        found = locked.read()
        original = found.text if found is not None else None
        doc = _parse(original, path)
        section = doc.get(SWITCH[0])
        if section is not None and not isinstance(section, Table):
            raise ConfigEditRefused(file=str(path), detail=f"{SWITCH[0]} is not a table")
        current = section.unwrap().get(SWITCH[1]) if section is not None else None
        if current != expected or (current is not None and not isinstance(current, bool)):
            theirs = "" if current is None else toml_literal(current)
            raise ConfigEditConflict(file=str(path), setting=".".join(SWITCH), theirs=theirs)
        if section is None:
            section = tomlkit.table()
            doc[SWITCH[0]] = section
        section[SWITCH[1]] = enabled
        text = tomlkit.dumps(doc)
        changed = text != original
        if changed:
            locked.write(text)
    previous = None if current is None else toml_literal(current)
    return EditResult(file=path, changed=changed, previous=previous)
