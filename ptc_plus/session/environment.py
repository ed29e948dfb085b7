"""The frozen capability environment of a session: record ``ptc-capability-environment/v1``.

One record format (ADR 0035): the payload is the session's
:class:`~ptc_plus.plan.CapabilityPlan` (config revision, identities with
contract revisions, full/on-demand/off sets, budget, overage, reasons) plus
how PTC is presented to the session (gate summary, code mode, token unit).
Computed once at session start, persisted through the host's session
records, and restored unchanged on resume.
Reading distinguishes a missing record (a session from before the plugin),
a corrupt one, and an unknown format — each with its own diagnostic — and
never recomputes silently.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import Any

import attrs
from cattrs import BaseValidationError, transform_error

from hookspecs import SessionRecord
from hookspecs.serialization import canonical_bytes, structure, unstructure
from ptc_plus.config import Disclosure, Presentation
from ptc_plus.migration import MigrationError, Migrations, VersionTooNew, VersionUnknown
from ptc_plus.plan import PLAN_MIGRATIONS, CapabilityPlan, PlanDiff, PlanEntry

KIND_PREFIX = "ptc-capability-environment/"
VERSION = 1
KIND = f"{KIND_PREFIX}v{VERSION}"

MIGRATIONS = Migrations(current=VERSION)
"""Steps taking an older environment payload to :data:`VERSION` (ADR 0066).

None yet: no release wrote another version (``presentation`` was added with a
default, so older records read as they are). A version 2 sets ``VERSION = 2``
and adds ``{1: step}``; a ``/v1`` record then migrates on resume.
"""


@attrs.frozen(kw_only=True)
class GateSummary:
    """The gate's decision as recorded with the environment (``reason`` is a stable token)."""

    enabled: bool
    stage: str
    reason: str
    debug_run: bool
    warnings: tuple[str, ...] = ()


@attrs.frozen(kw_only=True)
class RefreshMark:
    """An environment a ``/capabilities refresh`` applied: its number in the session and what it changed.

    ``sequence`` counts applied refreshes from 1 (the environment of session start has no mark);
    ``diff`` is against the environment it replaced, kept so the notice can still be written
    after a crash between persisting this record and telling the model (ADR 0068).
    """

    sequence: int
    diff: PlanDiff


@attrs.frozen(kw_only=True)
class Environment:
    """The session's frozen plan plus how PTC is presented to it.

    :ivar ptc: code mode was on when the session started (configured
        presentation not ``native``, gate passed, runtime usable there); when
        false the plan is recorded but not applied. A resume checks the gate
        and the sandbox again (ADR 0053): what is in force then is the
        session's state, not this field.
    :ivar native_reason: stable token saying why the session started native.
    :ivar presentation: the configured presentation (``[runtime]
        presentation``), frozen with the plan; records from before this field
        read as ``ptc``, the only presentation there was.
    :ivar token_unit: the unit of every token count in ``plan``.
    :ivar refresh: set when a refresh applied this environment (``None``: computed at session start).
    """

    version: int = VERSION
    ptc: bool
    native_reason: str = ""
    presentation: Presentation = Presentation.PTC
    gate: GateSummary
    token_unit: str
    plan: CapabilityPlan
    refresh: RefreshMark | None = None

    @property
    def sequence(self) -> int:
        """How many refreshes led to this environment (0: the one of session start)."""
        return self.refresh.sequence if self.refresh is not None else 0

    @property
    def config_revision(self) -> str:
        return self.plan.config_revision

    def with_disclosure(self, disclosure: Disclosure | None) -> tuple[PlanEntry, ...]:
        return self.plan.with_disclosure(disclosure)

    def names(self, disclosure: Disclosure | None) -> frozenset[str]:
        return frozenset(e.name for e in self.plan.with_disclosure(disclosure) if e.name)

    def payload(self) -> dict[str, Any]:
        data: dict[str, Any] = unstructure(self)
        return data

    def to_bytes(self) -> bytes:
        """Canonical bytes: equal environments give identical bytes."""
        return canonical_bytes(self)

    def to_record(self) -> SessionRecord:
        return SessionRecord(kind=KIND, version=VERSION, payload=self.payload())


class RestoreStatus(enum.StrEnum):
    RESTORED = "restored"
    MISSING = "missing"
    """No record: the session predates the plugin; it keeps the host's own provision."""
    CORRUPT = "corrupt"
    """A record of a readable format that does not parse or migrate: the environment is unproven."""
    UNSUPPORTED = "unsupported"
    """A record of a format this version cannot read: newer, or older with no migration from it."""


@attrs.frozen(kw_only=True)
class Restored:
    status: RestoreStatus
    environment: Environment | None = None
    detail: str = ""


def restore(records: Sequence[SessionRecord]) -> Restored:
    """The latest environment record among ``records`` (oldest first), diagnosed.

    A legal older format is migrated in memory (ADR 0066): the record is the
    header ``ptc-capability-environment/v<n>`` with version ``n``, its payload
    goes through :data:`MIGRATIONS` and the plan inside it through
    :data:`~ptc_plus.plan.PLAN_MIGRATIONS`. ``records`` are never changed and
    nothing is written back, so the original record stays as it was. A newer
    version, or an older one no step chain starts from, is *unsupported*; a
    payload whose version is not an integer, or whose migration step fails,
    is *corrupt*.
    """
    candidates = [r for r in records if r.kind.startswith(KIND_PREFIX)]
    if not candidates:
        return Restored(status=RestoreStatus.MISSING)
    latest = candidates[-1]
    if latest.kind != f"{KIND_PREFIX}v{latest.version}" or not MIGRATIONS.reads(latest.version):
        return Restored(status=RestoreStatus.UNSUPPORTED, detail=f"{latest.kind} version {latest.version}")
    upgraded = _upgrade(MIGRATIONS, latest.payload, f"{latest.kind} payload")
    if isinstance(upgraded, Restored):
        return upgraded
    plan = upgraded.get("plan")
    if isinstance(plan, dict):  # anything else does not structure: corrupt, below
        upgraded_plan = _upgrade(PLAN_MIGRATIONS, plan, f"{latest.kind} plan")
        if isinstance(upgraded_plan, Restored):
            return upgraded_plan
        upgraded["plan"] = upgraded_plan
    try:
        return Restored(status=RestoreStatus.RESTORED, environment=structure(upgraded, Environment))
    except BaseValidationError as error:
        return Restored(status=RestoreStatus.CORRUPT, detail="; ".join(transform_error(error)))
    except (TypeError, ValueError, KeyError, AttributeError) as error:
        return Restored(status=RestoreStatus.CORRUPT, detail=f"{type(error).__name__}: {error}")


def _upgrade(chain: Migrations, data: Any, what: str) -> dict[str, Any] | Restored:
    """``data`` migrated to ``chain``'s current version (a copy), or why it cannot be."""
    if not isinstance(data, dict):
        return Restored(status=RestoreStatus.CORRUPT, detail=f"{what} is not an object")
    try:
        return dict(chain.upgrade(data).data)
    except VersionTooNew as error:
        return Restored(status=RestoreStatus.UNSUPPORTED, detail=f"{what} version {error.found}")
    except VersionUnknown as error:
        if isinstance(error.found, int) and not isinstance(error.found, bool):  # legal, but no migration from it
            return Restored(status=RestoreStatus.UNSUPPORTED, detail=f"{what} version {error.found}")
        return Restored(status=RestoreStatus.CORRUPT, detail=f"{what}: {error}")
    except MigrationError as error:
        return Restored(status=RestoreStatus.CORRUPT, detail=f"{what}: {error}")
