"""Set the workspace file's management switch only if it still holds what the caller saw (ADR 0126).

The first key the settings page saved; since ADR 0129 one case of :func:`.key_editor.set_config_value`,
which saves any key of either file under the same rule (the value seen, a compare under the lock).
"""

from __future__ import annotations

from pathlib import Path

from ptc_plus.config.editor import EditResult
from ptc_plus.config.key_editor import set_config_value
from ptc_plus.config.paths import Scope

SWITCH = ("management", "enabled")
"""The key this editor sets."""


def set_management_enabled(workspace: Path, enabled: bool, *, expected: bool | None) -> EditResult:
    """Write ``[management] enabled = <enabled>`` to the workspace file if it now holds ``expected``
    (``None``: not set); ``previous`` is that value as TOML (``None``: not set).

    :raises ConfigEditConflict: the file holds another value (``theirs``: TOML, ``""`` when not set); nothing
        is written.
    :raises ConfigEditRefused: ``management`` is not a table, or the workspace cannot be edited safely.
    """
    return set_config_value(Scope.WORKSPACE, workspace, SWITCH, enabled, expected=expected)
