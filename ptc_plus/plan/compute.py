"""Plan computation for one agent, in six steps.

1. take the host's capability facts, drop unmanaged ones (and anything
   outside the parent agent's scope);
2. management off -> the host's own provision (all ``full``); else apply
   explicit ``off`` (an MCP server unit's ``off`` closes all its members, ADR 0071);
3. fix explicit ``full`` / ``on-demand`` (``full`` beyond the budget is kept and
   reported as overage; only the model's real context can stop it);
4. for the rest, pick the evidence (:mod:`.evidence`);
5. when the rest fit what is left of the budget all together, they are all
   ``full`` (reason ``fits-budget``, ADR 0080: a small catalog gets exactly the
   host's provision); else fill what is left with backed candidates in the
   order coverage desc, baseline rank, cost asc, identity; the rest stay on-demand;
6. every entry carries its reason.
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Sequence

import attrs

from ptc_plus.config import Disclosure, unit_server
from ptc_plus.plan.errors import PlanInputInvalid
from ptc_plus.plan.evidence import Decision, EvidenceRule
from ptc_plus.plan.inputs import DeliveryCost, PlanCandidate, PlanInput, StatisticsVote
from ptc_plus.plan.model import CapabilityPlan, PlanEntry, Reason

_NO_RANK = float("inf")
_IDENTITY = operator.attrgetter("identity")
_VOTING = frozenset({StatisticsVote.USABLE, StatisticsVote.WORKSPACE_ONLY})
"""Votes under which workspace statistics decide (``workspace-only``: without the user-global fallback)."""


def compute_plan(plan_input: PlanInput) -> CapabilityPlan:
    """The plan for ``plan_input``; a pure, deterministic function of it.

    Raises :class:`PlanInputInvalid` for duplicate identities or negative costs.
    """
    candidates = sorted(plan_input.candidates, key=_IDENTITY)
    _check(candidates)
    config = plan_input.config
    management = config.management
    entries: dict[str, PlanEntry] = {}
    present: list[PlanCandidate] = []
    for candidate in candidates:  # step 1
        if not candidate.managed:
            continue
        if not candidate.host_provided:
            entries[candidate.identity] = _entry(candidate, None, Reason.HOST_ABSENT)
        elif plan_input.parent_members is not None and candidate.identity not in plan_input.parent_members:
            entries[candidate.identity] = _entry(candidate, None, Reason.OUTSIDE_PARENT_SCOPE)
        else:
            present.append(candidate)
    delivery = plan_input.delivery_cost  # None: the sum of the costs, kept as the plan goes
    statistics = _statistics_state(plan_input)
    if not management.enabled:  # step 2, management off
        for candidate in present:
            entries[candidate.identity] = _entry(candidate, Disclosure.FULL, Reason.MANAGEMENT_OFF)
        used = sum(c.cost_tokens for c in present) if delivery is None else delivery([c.identity for c in present])
        return _plan(plan_input, statistics, entries, used, 0)
    known = {c.identity for c in candidates}
    for identity in sorted({*config.capabilities, *management.baseline} - known):
        if unit_server(identity) is None:  # a server unit is a switch over members, never a member itself
            entries[identity] = PlanEntry(identity=identity, disclosure=None, reason=Reason.HOST_ABSENT)
    full: list[str] = []
    undecided: list[PlanCandidate] = []
    used = 0
    for candidate in present:  # steps 2 and 3
        explicit = config.explicit_choice(candidate.identity)
        choice, why = (None, Reason.EXPLICIT) if explicit is None else (explicit[0], _reason(candidate, explicit[1]))
        if choice is Disclosure.FULL:
            after = used + candidate.cost_tokens if delivery is None else delivery([*full, candidate.identity])
            if plan_input.context_tokens is not None and after > plan_input.context_tokens:
                entries[candidate.identity] = _entry(candidate, Disclosure.ON_DEMAND, Reason.CONTEXT_LIMIT)
                continue
            full.append(candidate.identity)
            used = after
            over = after > management.budget_tokens
            entries[candidate.identity] = attrs.evolve(_entry(candidate, choice, why), overage=over)
        elif choice is not None:
            entries[candidate.identity] = _entry(candidate, choice, why)
        else:
            undecided.append(candidate)
    overage = max(0, used - management.budget_tokens)
    used = _fill(plan_input, undecided, full, used, delivery, entries, statistics)
    return _plan(plan_input, statistics, entries, used, overage)


def _reason(candidate: PlanCandidate, decided_by: str) -> Reason:
    """``explicit`` when the capability's own entry decided, ``server-unit`` when its server's did (ADR 0071)."""
    return Reason.EXPLICIT if decided_by == candidate.identity else Reason.SERVER_UNIT


def _fill(
    plan_input: PlanInput,
    undecided: Sequence[PlanCandidate],
    full: list[str],
    used: int,
    delivery: DeliveryCost | None,
    entries: dict[str, PlanEntry],
    statistics: StatisticsVote,
) -> int:
    """Steps 4 and 5: returns the tokens used after filling.

    ``undecided`` (in identity order) all become ``full`` with reason ``fits-budget`` when delivering them
    together with ``full`` costs at most the budget (and the model's real context, when known), measured as
    the fill below measures one more member; their evidence is still recorded, for the user. Otherwise each
    is filled or left on demand on its own evidence.
    """
    config = plan_input.config
    ranks = {identity: rank for rank, identity in enumerate(config.management.baseline)}
    limit = config.management.budget_tokens
    if plan_input.context_tokens is not None:
        limit = min(limit, plan_input.context_tokens)
    backed: list[tuple[float, float, int, str, PlanCandidate, Decision]] = []
    rule = EvidenceRule(
        settings=config.statistics,
        statistics_vote=statistics in _VOTING,
        user_vote=statistics is StatisticsVote.USABLE,
    )
    decide = rule.decide
    on_demand = Disclosure.ON_DEMAND
    if undecided:
        everything = (
            used + sum(c.cost_tokens for c in undecided)
            if delivery is None
            else delivery([*full, *(c.identity for c in undecided)])
        )
        if everything <= limit:
            for candidate in undecided:
                full.append(candidate.identity)
                found = decide(candidate, ranks.get(candidate.identity))
                entries[candidate.identity] = _decided(candidate, Disclosure.FULL, Reason.FITS_BUDGET, found)
            return everything
    for candidate in undecided:
        found = decide(candidate, ranks.get(candidate.identity))
        if found[1]:  # backed
            rank = found[5]
            coverage = found[2]
            # Identities are unique, so the order never reaches the candidate or the decision.
            backed.append(
                (
                    1.0 if coverage is None else -coverage,
                    _NO_RANK if rank is None else float(rank),
                    candidate.cost_tokens,
                    candidate.identity,
                    candidate,
                    found,
                )
            )
        else:
            entries[candidate.identity] = _decided(candidate, on_demand, found[0], found)
    backed.sort()  # step 5's order: coverage desc, baseline rank, cost asc, identity
    stable = tuple(full)  # explicit choices: their block comes first, the evidence's after it (ADR 0112)
    for _, _, cost, identity, candidate, found in backed:
        after = used + cost if delivery is None else delivery(stable, [*full[len(stable) :], identity])
        if after <= limit:
            full.append(identity)
            used = after
            entries[identity] = _decided(candidate, Disclosure.FULL, found[0], found)
        else:
            entries[identity] = _decided(candidate, on_demand, Reason.BUDGET_EXHAUSTED, found)
    return used


def _decided(candidate: PlanCandidate, disclosure: Disclosure, reason: Reason, found: Decision) -> PlanEntry:
    return PlanEntry(
        identity=candidate.identity,
        disclosure=disclosure,
        reason=reason,
        name=candidate.name,
        kind=candidate.kind,
        revision=candidate.revision,
        cost_tokens=candidate.cost_tokens,
        coverage=found[2],
        samples=found[3],
        scope=found[4],
        baseline_rank=found[5],
        window=found[6],
        passed_over=found[7],
    )


def _entry(candidate: PlanCandidate, disclosure: Disclosure | None, reason: Reason) -> PlanEntry:
    return PlanEntry(
        identity=candidate.identity,
        disclosure=disclosure,
        reason=reason,
        name=candidate.name,
        kind=candidate.kind,
        revision=candidate.revision,
        cost_tokens=candidate.cost_tokens,
    )


def _statistics_state(plan_input: PlanInput) -> StatisticsVote:
    if plan_input.statistics in (StatisticsVote.CORRUPT, StatisticsVote.INVALID):
        return plan_input.statistics
    if not plan_input.config.statistics.enabled:
        return StatisticsVote.DISABLED
    return plan_input.statistics


def _plan(
    plan_input: PlanInput, statistics: StatisticsVote, entries: dict[str, PlanEntry], used: int, overage: int
) -> CapabilityPlan:
    return CapabilityPlan(
        config_revision=plan_input.config_revision,
        management=plan_input.config.management.enabled,
        statistics=str(statistics),
        budget_tokens=plan_input.config.management.budget_tokens,
        used_tokens=used,
        overage_tokens=overage,
        entries=tuple(map(entries.__getitem__, sorted(entries))),
        statistics_detail=plan_input.statistics_detail,
    )


def _check(candidates: Sequence[PlanCandidate]) -> None:
    for before, after in itertools.pairwise(candidates):
        if before.identity == after.identity:
            raise PlanInputInvalid(detail=f"duplicate identity {after.identity!r}")
    for candidate in candidates:
        if candidate.cost_tokens < 0:
            raise PlanInputInvalid(detail=f"negative cost for {candidate.identity!r}")
