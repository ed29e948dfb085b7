"""Capability plan computation: a pure function from facts and config to a plan.

The input types (:class:`PlanCandidate`, :class:`ScopeStats`, :class:`PlanInput`)
belong to this package; the catalog and the statistics store map onto them.
"""

from __future__ import annotations

from ptc_plus.plan.codec import PLAN_MIGRATIONS, plan_bytes, plan_from_json, plan_to_json
from ptc_plus.plan.compute import compute_plan
from ptc_plus.plan.describe import reason_text
from ptc_plus.plan.diff import MemberChange, PlanDiff, plan_diff
from ptc_plus.plan.errors import PlanInputInvalid
from ptc_plus.plan.inputs import DeliveryCost, PlanCandidate, PlanInput, ScopeStats, StatisticsVote
from ptc_plus.plan.model import PLAN_VERSION, CapabilityPlan, PlanEntry, Reason, Scope

__all__ = [
    "PLAN_MIGRATIONS",
    "PLAN_VERSION",
    "CapabilityPlan",
    "DeliveryCost",
    "MemberChange",
    "PlanCandidate",
    "PlanDiff",
    "PlanEntry",
    "PlanInput",
    "PlanInputInvalid",
    "Reason",
    "Scope",
    "ScopeStats",
    "StatisticsVote",
    "compute_plan",
    "plan_bytes",
    "plan_diff",
    "plan_from_json",
    "plan_to_json",
    "reason_text",
]
