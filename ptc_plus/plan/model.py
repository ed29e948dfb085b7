"""The computed plan: one entry per capability, each with its recorded reason."""

from __future__ import annotations

import enum
from typing import Any

import attrs
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override

from hookspecs.serialization import converter
from ptc_plus.capabilities import CapabilityKind, as_kind
from ptc_plus.config import Disclosure

PLAN_VERSION = 1


class Reason(enum.StrEnum):
    """Why a capability got its disclosure (shown to the user, never to the model)."""

    MANAGEMENT_OFF = "management-off"
    """Management is off: the host's own provision, everything ``full``."""
    EXPLICIT = "explicit"
    """An explicit ``full``/``on-demand``/``off`` in the config."""
    SERVER_UNIT = "server-unit"
    """Decided by its MCP server's unit ``mcp:<server>``: its ``off`` (which wins over the member's own entry),
    or its ``full``/``on-demand`` for a member without an entry of its own (ADR 0071)."""
    WORKSPACE_STATISTICS = "workspace-statistics"
    USER_STATISTICS = "user-statistics"
    BASELINE = "baseline"
    BUDGET_EXHAUSTED = "budget-exhausted"
    """Backed by statistics or the baseline, but its contract did not fit what was left."""
    NOT_BACKED = "not-backed"
    """No sufficient statistics and not in the baseline: on-demand."""
    FITS_BUDGET = "fits-budget"
    """Management on, and every capability left after the explicit and server-unit choices fits what is left
    of the budget together: all of them ``full``, whatever statistics or the baseline say (ADR 0080).

    Added to plan version 1 without a version bump (no reader ever wrote it before): a reader from before it
    cannot structure a plan holding it, so it restores that session's environment as ``corrupt`` (unproven,
    the session stays usable) instead of guessing."""
    HOST_ABSENT = "host-absent"
    """Named by config or known earlier, but the host does not offer it now."""
    OUTSIDE_PARENT_SCOPE = "outside-parent-scope"
    CONTEXT_LIMIT = "context-limit"
    """An explicit ``full`` that would not fit the model's real context: on-demand, reported."""


class Scope(enum.StrEnum):
    WORKSPACE = "workspace"
    USER = "user"


@attrs.frozen(kw_only=True)
class Shortfall:
    """One scope whose statistics were looked at for a capability but were too few to vote: the fallback cause.

    ``samples`` eligible families had it available within the window (``0``: no sample), fewer than
    ``min_samples``.
    """

    scope: Scope
    samples: int
    min_samples: int


@attrs.frozen(kw_only=True)
class PlanEntry:
    """One capability's outcome. ``disclosure`` is ``None`` when it is not in the plan at all
    (host absent, outside the parent's scope); ``coverage``/``samples``/``scope`` are the
    statistics that decided, if any, over the last ``window`` eligible families; ``passed_over``
    names the scopes that were looked at first and why they could not decide (a capability left to
    the user-global fallback or the baseline says why); ``window`` is ``None`` when statistics had no
    vote for it. ``overage`` marks an explicit ``full`` beyond the budget."""

    identity: str
    disclosure: Disclosure | None
    reason: Reason
    name: str = ""
    kind: CapabilityKind | None = attrs.field(default=None, converter=as_kind)
    """Persisted as the kind's value, ``""`` for none (a capability the host does not offer): :func:`kind_value`."""
    revision: str = ""
    cost_tokens: int = 0
    coverage: float | None = None
    samples: int | None = None
    scope: Scope | None = None
    baseline_rank: int | None = None
    overage: bool = False
    window: int | None = None
    passed_over: tuple[Shortfall, ...] = ()


def kind_value(kind: CapabilityKind | None) -> str:
    """How a plan entry's kind is persisted: its value, ``""`` for none (the bytes of every plan written before
    the kind was typed, ADR 0122)."""
    return "" if kind is None else kind.value


def _kind_of(value: Any, _: Any) -> CapabilityKind | None:
    text = converter.structure(value, str)
    return None if text == "" else converter.structure(text, CapabilityKind)


converter.register_unstructure_hook(
    PlanEntry, make_dict_unstructure_fn(PlanEntry, converter, kind=override(unstruct_hook=kind_value))
)
converter.register_structure_hook(
    PlanEntry, make_dict_structure_fn(PlanEntry, converter, kind=override(struct_hook=_kind_of))
)


@attrs.frozen(kw_only=True)
class CapabilityPlan:
    """A frozen plan for one agent: identical inputs give identical bytes (see :mod:`.codec`).

    ``used_tokens`` is the delivery cost of the ``full`` set; ``overage_tokens``
    how far explicit ``full`` choices alone go beyond ``budget_tokens``.
    ``statistics_detail`` says which store cost statistics (part of) their vote
    and how (``PTC-5xxx: ...``, English, as recorded), ``""`` when none did.
    """

    version: int = PLAN_VERSION
    config_revision: str
    management: bool
    statistics: str
    budget_tokens: int
    used_tokens: int
    overage_tokens: int
    entries: tuple[PlanEntry, ...]
    statistics_detail: str = ""

    def members(self, disclosure: Disclosure) -> tuple[str, ...]:
        """Identities with ``disclosure``, sorted."""
        return tuple(e.identity for e in self.entries if e.disclosure is disclosure)

    def entry(self, identity: str) -> PlanEntry | None:
        return next((e for e in self.entries if e.identity == identity), None)

    def with_disclosure(self, disclosure: Disclosure | None) -> tuple[PlanEntry, ...]:
        """Entries with ``disclosure`` (``None``: not in the plan at all), in identity order."""
        return tuple(e for e in self.entries if e.disclosure is disclosure)

    def effective(self) -> tuple[PlanEntry, ...]:
        """The effective set: ``full`` and ``on-demand`` entries (callable, findable)."""
        return tuple(e for e in self.entries if e.disclosure in (Disclosure.FULL, Disclosure.ON_DEMAND))
