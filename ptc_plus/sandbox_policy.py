"""The sandbox policy: what a program's own process may touch.

It lives below both the runtime, which enforces it, and the config, which
reads it from a file and lets a workspace only tighten it, so that neither
imports the other (ADR 0057).
"""

from __future__ import annotations

import enum

__all__ = ["SandboxPolicy"]


class SandboxPolicy(enum.StrEnum):
    """What the program's own process may do (nested tools keep their own policy)."""

    READ_ONLY = "read-only"
    """Confined: the workspace is mounted read-only; nothing on the host can be written."""
    WORKSPACE_WRITE = "workspace-write"
    """Confined: only the workspace (and a private ``/tmp``) is writable."""
    DANGER_FULL_ACCESS = "danger-full-access"
    """No confinement, resource limits only; an explicit opt-in."""

    @property
    def confined(self) -> bool:
        return self is not SandboxPolicy.DANGER_FULL_ACCESS
