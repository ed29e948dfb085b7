"""Errors the demo raises on purpose: where it may run (usage errors, exit code 2)."""

from __future__ import annotations

from ptc_plus.errors import UsageError


class DemoWorkspaceInUse(UsageError):
    """The demo's workspace holds files the demo did not make: it writes there, so it refuses.

    :ivar params: ``path``.
    """

    code = "PTC-1101"


class DemoWorkspaceNotADirectory(UsageError):
    """The demo's workspace is not an existing directory (nothing is created).

    :ivar params: ``path``.
    """

    code = "PTC-1102"
