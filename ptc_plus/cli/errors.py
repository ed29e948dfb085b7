"""Errors only the command line raises."""

from __future__ import annotations

from ptc_plus.errors import UsageError


class WorkspaceNotADirectory(UsageError):
    """``--workspace`` names something that is not an existing directory (nothing is created)."""

    code = "PTC-1002"
