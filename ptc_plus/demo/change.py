"""The demo's config change: what a user would do between turns before ``/capabilities refresh``.

The edits go through :func:`~ptc_plus.config.editor.set_capability`, the
editor ``ptc-plus capabilities set`` uses, so the demo shows the real command
line. A workspace the user keeps is put back as it was afterwards (only what
the demo changed): the change must not outlive the run, or it would decide
the next run's plan and hide what the statistics learn (ADR 0039).
"""

from __future__ import annotations

from pathlib import Path

import attrs

from ptc_plus.config import INHERIT, set_capability

CHANGES: tuple[tuple[str, str], ...] = (
    ("host:convert_units", "full"),
    ("host:write_file", "off"),
)
"""Identity and disclosure the demo sets: the converter every run uses in full, the file writer it never needs off."""


@attrs.frozen(kw_only=True)
class Edit:
    """One ``capabilities set`` the demo ran: ``previous`` is the explicit choice it replaced (None: inherited)."""

    identity: str
    value: str
    changed: bool
    previous: str | None

    @property
    def command(self) -> str:
        """The command line a user types for this edit."""
        return f"ptc-plus capabilities set {self.identity} {self.value}"

    @property
    def undo(self) -> str:
        """The command line that puts the previous choice back."""
        return f"ptc-plus capabilities set {self.identity} {self.previous or INHERIT}"


@attrs.frozen(kw_only=True)
class ConfigChange:
    """The edits the demo made to a workspace's config file."""

    edits: tuple[Edit, ...] = ()

    @property
    def changed(self) -> tuple[Edit, ...]:
        return tuple(edit for edit in self.edits if edit.changed)


def change_config(workspace: Path) -> ConfigChange:
    """Apply :data:`CHANGES` to ``workspace``'s config file, as ``ptc-plus capabilities set`` does."""
    edits = []
    for identity, value in CHANGES:
        result = set_capability(workspace, identity, value)
        edits.append(Edit(identity=identity, value=value, changed=result.changed, previous=result.previous))
    return ConfigChange(edits=tuple(edits))


def restore_config(workspace: Path, change: ConfigChange) -> tuple[Edit, ...]:
    """Undo, last first, the edits of ``change`` that changed the file; returns them.

    Each is undone with the editor, as the user would (``capabilities set ... inherit`` or the earlier
    value), so an edit someone else made meanwhile survives.
    """
    undone = tuple(reversed(change.changed))
    for edit in undone:
        set_capability(workspace, edit.identity, edit.previous or INHERIT)
    return undone
