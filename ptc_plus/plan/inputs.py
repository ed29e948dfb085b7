"""What plan computation needs, as plain values the caller assembles.

These types are this package's own on purpose: the catalog, the statistics
store and the host view each map their facts onto them, so the plan stays a
pure function that can be tested and benchmarked without any of them.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import Protocol

import attrs

from ptc_plus.capabilities import CapabilityKind, as_kind
from ptc_plus.config import PtcConfig


@attrs.frozen(kw_only=True)
class ScopeStats:
    """Usage statistics of one capability in one scope.

    ``coverage`` is families-that-used / families-where-available over the
    window, ``None`` when there is no denominator ("no sample", never 0 %);
    ``samples`` is that denominator.
    """

    coverage: float | None
    samples: int


@attrs.frozen(kw_only=True)
class PlanCandidate:
    """One capability as the host offers it to this agent.

    :ivar cost_tokens: measured tokens of its delivered contract alone.
    :ivar host_provided: ``False`` for a capability known (e.g. from an earlier
        plan) but no longer offered by the host: it gets reason ``host-absent``.
    :ivar managed: ``False`` for ``run_code``, discovery, REPL state, user
        bindings: dropped in step 1, never in the plan.
    :ivar name: the member's name in the host view (tool or skill name, MCP
        server); ``kind`` and ``revision`` (the contract revision) are
        carried into the plan unchanged, so a record names what it froze.
    """

    identity: str
    cost_tokens: int
    name: str = ""
    kind: CapabilityKind | None = attrs.field(default=None, converter=as_kind)
    revision: str = ""
    host_provided: bool = True
    managed: bool = True
    workspace: ScopeStats | None = None
    user: ScopeStats | None = None


class StatisticsVote(enum.StrEnum):
    """Whether statistics may vote in this plan at all."""

    USABLE = "usable"
    DISABLED = "disabled"
    """Switched off in config (``[statistics] enabled = false``)."""
    INVALID = "invalid"
    """A config problem took the vote away: a bad ``[statistics]`` key, or a config file that could not be
    read at all (ADR 0033). Never reported as "disabled by the config": the config said no such thing."""
    CORRUPT = "corrupt"
    """The workspace store (or the only store there is) could not be read: statistics lose their vote,
    nothing else changes. The user-global fallback does not stand in for a damaged workspace store."""
    WORKSPACE_ONLY = "workspace-only"
    """The user-global store could not be read but the workspace store could: workspace statistics vote,
    the user-global fallback does not."""
    UNAVAILABLE = "unavailable"
    """No statistics store exists here (yet): no vote, never a guess."""


class DeliveryCost(Protocol):
    """Tokens of delivering ``full`` members as the catalog message delivers them (ADR 0112).

    ``stable`` are members decided by the config and the catalog alone (explicit choices, management
    off, the whole set fitting the budget), ``varying`` those decided by evidence: the message delivers
    each group as one block (a type shared within a block counted once), the stable block first.
    """

    def __call__(self, stable: Sequence[str], varying: Sequence[str] = ()) -> int: ...


@attrs.frozen(kw_only=True)
class PlanInput:
    """Everything one agent's plan depends on.

    ``parent_members`` is the set of identities present (full or on-demand) in
    the parent agent's plan, ``None`` for a root agent: a child never gains a
    capability its parent's scope lacks. ``context_tokens`` is the model's
    real context size, when known: explicit ``full`` may exceed the budget but
    never that. ``delivery_cost`` defaults to the sum of ``cost_tokens``.
    ``statistics_detail`` is recorded in the plan as is: which store cost
    statistics their vote, and why.
    """

    candidates: Sequence[PlanCandidate]
    config: PtcConfig
    config_revision: str
    statistics: StatisticsVote = StatisticsVote.USABLE
    parent_members: frozenset[str] | None = None
    context_tokens: int | None = None
    statistics_detail: str = ""
    delivery_cost: DeliveryCost | None = attrs.field(default=None, eq=False)
