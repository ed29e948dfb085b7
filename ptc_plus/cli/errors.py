"""Errors only the command line raises."""

from __future__ import annotations

from ptc_plus.errors import PtcError, UsageError


class WorkspaceNotADirectory(UsageError):
    """``--workspace`` names something that is not an existing directory (nothing is created)."""

    code = "PTC-1002"


class SettingsPortUnavailable(PtcError):
    """``ptc-plus settings --port N``: 127.0.0.1:N cannot be listened on (taken, or not allowed)."""

    code = "PTC-1004"
