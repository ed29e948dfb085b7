"""The plan's canonical bytes and its JSON form (the plugin's one converter, with ``version``)."""

from __future__ import annotations

from typing import Any

from hookspecs.serialization import canonical_bytes, structure, unstructure
from ptc_plus.plan.model import CapabilityPlan


def plan_to_json(plan: CapabilityPlan) -> dict[str, Any]:
    """A JSON object holding ``version`` and every field of the plan."""
    data: dict[str, Any] = unstructure(plan)
    return data


def plan_from_json(data: dict[str, Any]) -> CapabilityPlan:
    """The inverse of :func:`plan_to_json` (strict: unknown keys and wrong types raise)."""
    return structure(data, CapabilityPlan)


def plan_bytes(plan: CapabilityPlan) -> bytes:
    """Sorted-key JSON: identical plans give identical bytes."""
    return canonical_bytes(plan)
