"""The plan a new session gets, computed from the host's catalog by :func:`ptc_plus.plan.compute_plan`.

Every managed capability becomes a :class:`~ptc_plus.plan.PlanCandidate`
with its contract's measured cost and what the usage statistics of its two
scopes say (:func:`read_statistics`); the budget counts the delivery of the
``full`` set as the catalog message delivers it, so a type shared by several
tools of one block is charged once, and one shared across the stable and the
varying block twice, as the model receives it (:func:`delivery_cost`,
ADR 0112). With management off (``enabled = false``; on is the default,
ADR 0080) the plan is the host's own provision: everything ``full``, reason
``management-off``.

Whether statistics vote follows the two stores' state ("corrupt
statistics lose their vote"):

- neither store exists yet: ``unavailable`` (no vote, never a guess);
- the workspace store is damaged or from a newer release: ``corrupt`` — the
  whole vote is lost, the user-global fallback included: it would otherwise
  speak for a workspace whose own evidence is unreadable;
- only the user-global store is damaged: ``workspace-only`` — workspace
  statistics still vote, the user-global fallback does not (with no
  workspace store either, there is nothing left to vote: ``corrupt``);
- otherwise ``usable``.

The damaged store's own diagnostic (its PTC code and message) is recorded
in the plan (:attr:`CapabilityPlan.statistics_detail`). Live and resumed
sessions never come here: they keep their frozen plan.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import attrs

from hookspecs import TokenCounter
from ptc_plus.capabilities import Catalog
from ptc_plus.config import LoadedConfig, StatisticsSection
from ptc_plus.plan import (
    CapabilityPlan,
    DeliveryCost,
    PlanCandidate,
    PlanInput,
    ScopeStats,
    StatisticsVote,
    compute_plan,
)
from ptc_plus.session.catalog_text import compose
from ptc_plus.statistics import StoreView, schema_revision_of, user_store, workspace_store

STATISTICS_VOTE = StatisticsVote.UNAVAILABLE
"""What statistics say in a plan computed without a workspace to read them from."""

_UNREADABLE = frozenset({"corrupt", "future-version"})


@attrs.frozen(kw_only=True)
class StatisticsReading:
    """Both scopes' stores as read for one plan, and the vote they allow.

    ``workspace``/``user`` are ``None`` for a store that cannot vote (missing or unreadable).
    """

    vote: StatisticsVote
    detail: str = ""
    workspace: StoreView | None = None
    user: StoreView | None = None


def _problem(view: StoreView) -> str:
    problem = view.problem
    return f"{problem.code}: {problem.message('en')}" if problem is not None else view.status


def read_statistics(workspace: Path, env: Mapping[str, str] | None = None) -> StatisticsReading:
    """Read the workspace store of ``workspace`` and the user store; never raises for their content."""
    local = workspace_store(workspace).read()
    user = user_store(env).read()
    if local.status in _UNREADABLE:
        return StatisticsReading(vote=StatisticsVote.CORRUPT, detail=_problem(local))
    if user.status in _UNREADABLE:
        if local.status == "missing":
            return StatisticsReading(vote=StatisticsVote.CORRUPT, detail=_problem(user))
        return StatisticsReading(vote=StatisticsVote.WORKSPACE_ONLY, detail=_problem(user), workspace=local)
    if local.status == "missing" and user.status == "missing":
        return StatisticsReading(vote=StatisticsVote.UNAVAILABLE)
    return StatisticsReading(
        vote=StatisticsVote.USABLE,
        workspace=local if local.status == "ok" else None,
        user=user if user.status == "ok" else None,
    )


def scope_stats(
    view: StoreView | None, identity: str, revision: str, schema_revision: str, settings: StatisticsSection
) -> ScopeStats | None:
    """What ``view`` says about one capability over the configured window (``None``: no store to say it)."""
    if view is None:
        return None
    found = view.stats(
        identity,
        revision,
        schema_revision=schema_revision,
        window=settings.window,
        min_samples=settings.min_samples,
    )
    return ScopeStats(coverage=found.coverage, samples=found.available)


def candidates(
    catalog: Catalog,
    counter: TokenCounter,
    reading: StatisticsReading | None = None,
    settings: StatisticsSection | None = None,
) -> list[PlanCandidate]:
    """The managed capabilities of ``catalog`` as plan candidates, each with its measured contract cost
    and, given a ``reading``, its statistics in both scopes under ``settings``."""
    found: list[PlanCandidate] = []
    settings = settings or StatisticsSection()
    for c in catalog.managed():
        local = user = None
        if reading is not None and (reading.workspace is not None or reading.user is not None):
            shape = schema_revision_of(c)
            local = scope_stats(reading.workspace, c.identity, c.revision, shape, settings)
            user = scope_stats(reading.user, c.identity, c.revision, shape, settings)
        found.append(
            PlanCandidate(
                identity=c.identity,
                cost_tokens=counter.count(c.contract),
                name=c.name,
                kind=c.kind,
                revision=c.revision,
                workspace=local,
                user=user,
            )
        )
    return found


def delivery_cost(catalog: Catalog, counter: TokenCounter) -> DeliveryCost:
    """Measured tokens of the ``full`` contracts as the catalog message delivers them (:func:`.catalog_text.compose`:
    the stable block, then the varying one, shared types once per block), cached per split."""
    cache: dict[tuple[frozenset[str], frozenset[str]], int] = {}

    def cost(stable: Sequence[str], varying: Sequence[str] = ()) -> int:
        key = (frozenset(stable), frozenset(varying))
        found = cache.get(key)
        if found is None:
            text = compose(catalog, sorted(key[0]), sorted(key[1]))
            found = cache[key] = counter.count(text) if text else 0
        return found

    return cost


def session_plan(
    catalog: Catalog,
    loaded: LoadedConfig,
    counter: TokenCounter,
    *,
    statistics: StatisticsVote = STATISTICS_VOTE,
    parent_members: frozenset[str] | None = None,
    workspace: Path | None = None,
) -> CapabilityPlan:
    """The plan for one agent over ``catalog`` (its host scope), from the effective config.

    Given ``workspace``, the statistics of that workspace's store and of the
    user store vote (:func:`read_statistics`) and ``statistics`` is ignored;
    without it, ``statistics`` is the vote and no candidate has statistics.
    The stores are not read when the config takes the vote away anyway, and
    with management off (nothing to decide) only their state is recorded.
    The model's real context size comes from ``[management] context_tokens``
    when the user states it; the host contract reports none (ADR 0047).
    """
    settings = loaded.config.statistics
    reading: StatisticsReading | None = None
    if loaded.statistics_disabled:
        # A config problem switched statistics off: say so, not "disabled by the config".
        statistics = StatisticsVote.INVALID
    elif workspace is not None and settings.enabled:
        reading = read_statistics(workspace)
        statistics = reading.vote
    return compute_plan(
        PlanInput(
            candidates=candidates(catalog, counter, reading if loaded.config.management.enabled else None, settings),
            config=loaded.config,
            config_revision=loaded.revision,
            statistics=statistics,
            statistics_detail=reading.detail if reading is not None else "",
            parent_members=parent_members,
            context_tokens=loaded.config.management.context_tokens,
            delivery_cost=delivery_cost(catalog, counter),
        )
    )
