"""The plan's canonical bytes and its JSON form (cattrs + orjson, with ``version``)."""

from __future__ import annotations

from typing import Any

import orjson

from ptc_plus.config.converter import make_converter
from ptc_plus.plan.model import CapabilityPlan

_CONVERTER = make_converter()


def plan_to_json(plan: CapabilityPlan) -> dict[str, Any]:
    """A JSON object holding ``version`` and every field of the plan."""
    data: dict[str, Any] = _CONVERTER.unstructure(plan)
    return data


def plan_from_json(data: dict[str, Any]) -> CapabilityPlan:
    """The inverse of :func:`plan_to_json` (strict: unknown keys and wrong types raise)."""
    return _CONVERTER.structure(data, CapabilityPlan)


def plan_bytes(plan: CapabilityPlan) -> bytes:
    """Sorted-key JSON: identical plans give identical bytes."""
    return orjson.dumps(plan_to_json(plan), option=orjson.OPT_SORT_KEYS)
