"""The task suite of the token evaluation (issue 15), version ``SUITE.version``.

The suite is fixed and versioned before any result is looked at: every
task, script, oracle, fixture, the world's data (its seed) and the filler are
part of it, and any change to one of them bumps ``version`` so results of
different suites are never compared as one.

- ``world.py``: the executable world (records service with 240 orders, 60
  customers, 80 products; a flaky inventory tool; the long-tail ``tax_rate``
  and ``shipping_quote``; the demo tools bound to the workspace).
- ``catalog.py``: ``filler(n)``, schema-only tools to reach a catalog size.
- ``tNN_*.py``: one measured task each; ``warmup.py``: the warm-up set
  (never measured), whose families build the mature statistics. Each task
  is also a ``PLAN`` (``ptc_plus.evaluation.task_plan``): its needs in the
  user's words, tools, arguments and dependencies, written once for every
  style; ``PLANS`` maps every task id to it, ``CHILD_PLANS`` the child
  task's id to its sub-agent's plan.
- ``derived.py``: values a model works out between calls (an extension of
  the plan types, marked as such until the policy owns it);
  ``plan_check.py``: a plan executed directly against the tools, which the
  tests hold to each task's oracle.
- ``oracles.py``: the rule every oracle applies: one stated answer and it is
  right, nothing wrong named, hedges fail.

The engine loads this file by path as a package (relative imports), reads
``SUITE`` and runs every task in every style.
"""

from __future__ import annotations

from ptc_plus.evaluation.task import Suite
from ptc_plus.evaluation.task_plan import TaskPlan

from . import (
    t01_find_todos,
    t02_aggregate_orders,
    t03_cross_reference,
    t04_best_headphones,
    t05_multi_step,
    t06_gross_with_tax,
    t07_child_agent,
    t08_flaky_stock,
    t09_one_call,
    t10_mcp_time,
    t11_write_report,
    t12_meeting_notes,
    t13_shipping_quote,
    t14_invoice_files,
    t15_gold_customers,
    t16_parcel_weights,
    warmup,
)
from .catalog import filler
from .world import make_world, world_tools

_MODULES = (
    t01_find_todos,
    t02_aggregate_orders,
    t03_cross_reference,
    t04_best_headphones,
    t05_multi_step,
    t06_gross_with_tax,
    t07_child_agent,
    t08_flaky_stock,
    t09_one_call,
    t10_mcp_time,
    t11_write_report,
    t12_meeting_notes,
    t13_shipping_quote,
    t14_invoice_files,
    t15_gold_customers,
    t16_parcel_weights,
)
PLANS: dict[str, TaskPlan] = {module.TASK.id: module.PLAN for module in _MODULES} | warmup.PLANS
"""Every task's plan (measured and warm-up), by task id: what the one policy turns into each style's requests."""
CHILD_PLANS: dict[str, TaskPlan] = {t07_child_agent.TASK.id: t07_child_agent.CHILD_PLAN}
"""By task id, the plan of the child agent its ``agent`` step starts (also its step's ``child``)."""

SUITE = Suite(
    version="2",
    # Every task runs its plan through the policy of each style (``Task.plan``).
    tasks=tuple(module.TASK for module in _MODULES),
    warmup=warmup.TASKS,
    world=make_world,
    tools=world_tools,
    filler=filler,
)

__all__ = ["CHILD_PLANS", "PLANS", "SUITE"]
