"""The plan's canonical bytes and its JSON form (the plugin's one converter, with ``version``)."""

from __future__ import annotations

from typing import Any

from hookspecs.serialization import canonical_bytes, structure, unstructure
from ptc_plus.migration import Migrations
from ptc_plus.plan.model import PLAN_VERSION, CapabilityPlan

PLAN_MIGRATIONS = Migrations(current=PLAN_VERSION)
"""Steps taking the JSON of an older plan to :data:`PLAN_VERSION` (ADR 0066).

None yet: no release wrote another plan version (fields added since, such as
``statistics_detail``, have defaults, so older plans read as they are). A
version 2 adds ``{1: step}`` here and every reader of a plan (this codec and
the session's environment record) migrates through it.
"""


def plan_to_json(plan: CapabilityPlan) -> dict[str, Any]:
    """A JSON object holding ``version`` and every field of the plan."""
    data: dict[str, Any] = unstructure(plan)
    return data


def plan_from_json(data: dict[str, Any]) -> CapabilityPlan:
    """The inverse of :func:`plan_to_json` (strict: unknown keys and wrong types raise).

    A legal older version is first migrated in memory through
    :data:`PLAN_MIGRATIONS` (``data`` is not changed).

    :raises ptc_plus.migration.MigrationError: ``version`` is newer, unknown, or
        an older payload its step cannot migrate.
    """
    return structure(PLAN_MIGRATIONS.upgrade(data).data, CapabilityPlan)


def plan_bytes(plan: CapabilityPlan) -> bytes:
    """Sorted-key JSON: identical plans give identical bytes."""
    return canonical_bytes(plan)
