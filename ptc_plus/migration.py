"""Upgrading persisted payloads written by older releases: a version and a chain of steps.

Every persisted payload carries an integer ``version`` (ADR 0058). A reader
that meets an older, legal version does not guess: it runs the payload
through registered steps, each taking the plain JSON of version ``n`` to
version ``n + 1``, until it reaches the version it knows. A version newer
than the reader's is refused (:class:`VersionTooNew`), never read as if it
were the current one; a version with no path to the current one is refused
too (:class:`VersionUnknown`).

Steps work on plain JSON (``dict``/``list``/scalars), before the strict
converter structures the result: an old payload does not fit today's types,
which is why it needs migrating. A step must be a pure function of its input
(no clock, no file system), so migrating the same bytes twice gives the same
result and a migrated file can be reproduced from the kept original.

What happens to the file on disk is the owner's decision, recorded with the
format (for statistics: the original is kept beside it as
``<name>.v<n>.bak`` before the first write in the new format, ADR 0066).
Shared by every owner of a persisted format, so it lives with the root
modules (errors, messages) below all of them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import attrs

Step = Callable[[dict[str, Any]], dict[str, Any]]
"""Takes the plain JSON of version ``n`` (a fresh copy it may change) to version ``n + 1`` (without setting it)."""


class MigrationError(ValueError):
    """The payload cannot be brought to the current version; owners map it to their own typed error."""


class VersionTooNew(MigrationError):
    """Written by a newer release: never read, never overwritten."""

    def __init__(self, found: int, supported: int) -> None:
        super().__init__(f"version {found} is newer than {supported}")
        self.found = found
        self.supported = supported


class VersionUnknown(MigrationError):
    """Not an integer version, or an older one no step chain starts from."""

    def __init__(self, found: object) -> None:
        super().__init__(f"unknown version {found!r}")
        self.found = found


class StepFailed(MigrationError):
    """A step met a payload that does not have the shape of the version it claims."""

    def __init__(self, version: int, detail: str) -> None:
        super().__init__(f"migrating from version {version}: {detail}")
        self.version = version
        self.detail = detail


@attrs.frozen(kw_only=True)
class Upgraded:
    """The payload at the current version, and the version it was read in."""

    data: dict[str, Any]
    from_version: int

    @property
    def migrated(self) -> bool:
        return self.from_version != self.data.get("version")


@attrs.frozen(kw_only=True)
class Migrations:
    """The step chain of one payload kind: ``steps[n]`` takes version ``n`` to ``n + 1``.

    ``current`` is the version the reader knows; every version from the
    oldest step to ``current`` must have its step (checked at construction).
    """

    current: int
    steps: Mapping[int, Step] = attrs.field(factory=dict)

    def __attrs_post_init__(self) -> None:
        if self.steps and set(self.steps) != set(range(min(self.steps), self.current)):
            raise ValueError(f"steps must be consecutive up to {self.current}, got {sorted(self.steps)}")

    def reads(self, version: int) -> bool:
        """``version`` is :attr:`current` or has a step chain to it (checks a header before its payload)."""
        return version == self.current or version in self.steps

    def upgrade(self, data: Mapping[str, Any]) -> Upgraded:
        """``data`` at :attr:`current`, with ``version`` set by each step's result.

        ``data`` is not changed (each step gets a copy).

        :raises VersionTooNew: ``version`` is above :attr:`current`.
        :raises VersionUnknown: ``version`` is missing, not an integer, or older than any step.
        :raises StepFailed: a step met a malformed payload (a ``KeyError``, ``TypeError`` or
            ``ValueError`` inside it).
        """
        found = data.get("version")
        if isinstance(found, bool) or not isinstance(found, int):
            raise VersionUnknown(found)
        if found > self.current:
            raise VersionTooNew(found, self.current)
        if found < self.current and found not in self.steps:
            raise VersionUnknown(found)
        payload = dict(data)
        version = found
        while version < self.current:
            try:
                payload = self.steps[version](_plain_copy(payload))
            except (KeyError, TypeError, ValueError, AttributeError) as exc:
                raise StepFailed(version, f"{type(exc).__name__}: {exc}") from None
            version += 1
            payload["version"] = version
        return Upgraded(data=payload, from_version=found)


def _plain_copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _plain_copy(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain_copy(item) for item in value]
    return value


__all__ = ["MigrationError", "Migrations", "Step", "StepFailed", "Upgraded", "VersionTooNew", "VersionUnknown"]
