"""A workflow run's caps: defaults, the deployment's ceilings, a workspace file only lowering them (ADR 0116)."""

from __future__ import annotations

import os
from typing import Any

import attrs

from ptc_plus.config import WorkflowSection

MAX_CONCURRENT_CEILING = 16
MAX_TOTAL_AGENTS = 1000
MAX_ITEMS_PER_CALL = 4096
TIMEOUT_S = 3600.0
"""The whole run's deadline (script, children, reaping)."""
CHILD_MAX_STEPS = 32


def default_concurrency(cores: int | None = None) -> int:
    """``min(16, max(1, cores - 2))``: two cores stay for the host and the script itself."""
    count = os.cpu_count() if cores is None else cores
    return min(MAX_CONCURRENT_CEILING, max(1, (count or 1) - 2))


@attrs.frozen(kw_only=True)
class WorkflowCaps:
    """Caps of one run. Every value is positive; :meth:`lowered` never raises one."""

    max_concurrent_agents: int = attrs.field(factory=default_concurrency)
    max_total_agents: int = MAX_TOTAL_AGENTS
    max_items_per_call: int = MAX_ITEMS_PER_CALL
    timeout_s: float = TIMEOUT_S
    child_max_steps: int = CHILD_MAX_STEPS

    def lowered(self, **wanted: float | None) -> WorkflowCaps:
        """These caps with each given value taken where it is lower (``None``, 0 or above: kept)."""
        changes: dict[str, Any] = {}
        for name, value in wanted.items():
            if value is None or value <= 0:
                continue
            current = getattr(self, name)
            if value < current:
                changes[name] = type(current)(value)
        return attrs.evolve(self, **changes) if changes else self


def caps_from(section: WorkflowSection) -> WorkflowCaps:
    """The caps a loaded ``[workflow]`` section gives (its checks kept every value within its ceiling)."""
    return WorkflowCaps(
        max_concurrent_agents=section.max_concurrent_agents or default_concurrency(),
        max_total_agents=section.max_total_agents,
        max_items_per_call=section.max_items_per_call,
        timeout_s=float(section.timeout_s),
    )
