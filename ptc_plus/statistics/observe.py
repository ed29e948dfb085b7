"""Usage observation per session family, from host facts only (ADR 0067).

What counts, and where it comes from:

- **available**: a capability an agent could really call. Under code mode,
  its frozen plan's ``full`` and ``on-demand`` entries; ``off`` and
  not-in-plan entries never. An agent presented natively (or without an
  environment) has the host's own provision: every managed capability of its
  view. Given per agent when the plugin holds its plan: start, resume, fork.
- **used**: a dispatch that reached the tool's owner, i.e. the host ran the
  ``tool-execute`` seam for it, whatever it settled as (ok, error,
  cancelled). A call refused by validation or the guard never reaches that
  seam; discovery requests, listings and a resume's replay of the log never
  dispatch at all. A program's nested calls pass the same seam with the
  program's agent as caller, so they count for its family. A skill counts as
  used once its host loader returned its body (an ok result).

A family contributes one :class:`~.sample.Evidence` per capability however
many calls or agents it took, and nothing is a sample until the host says the
family settled. The sample is credited per workspace: each capability to the
resolved real path of the workspace of the agents that had it available,
so a descendant working elsewhere credits that workspace (one sample per
workspace); the user-global sample is the family's union, one per family.
Only identities, revisions, disclosures and evidence bits are kept: never a
call's arguments, results or any user text.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from hookspecs import ToolCall, ToolResult, ToolSpec
from ptc_plus.capabilities import KINDS, CapabilityKind
from ptc_plus.config import load_config
from ptc_plus.errors import PtcError
from ptc_plus.statistics.sample import Disclosure, Evidence, FamilySample
from ptc_plus.statistics.shapes import derive as derive_shape
from ptc_plus.statistics.shapes import merge as merge_shapes
from ptc_plus.statistics.store import StatisticsStore, user_store, workspace_store

__all__ = [
    "AgentOffers",
    "FamilyObserver",
    "Offer",
    "Settled",
    "family_samples",
    "real_workspace",
    "record_settled",
    "union",
]

_log = logging.getLogger(__name__)


@attrs.frozen(kw_only=True)
class Offer:
    """One capability an agent had available: its identity, contract revision and disclosure then."""

    identity: str
    revision: str
    disclosure: Disclosure
    """``full`` or ``on-demand`` (an agent presented natively has everything ``full``)."""
    schema_revision: str = ""
    """The call-shape revision of that contract (ADR 0066); ``""`` when unknown."""
    learn_shape: bool = False
    """Learn the shape of its results (ADR 0102): its contract publishes no output schema and
    ``[statistics] learn_output_shapes`` is on."""


@attrs.frozen(kw_only=True)
class AgentOffers:
    """What one agent had available, frozen when the plugin held its plan.

    :ivar workspace: the resolved real path of the agent's workspace (never the process's directory).
    :ivar loaders: the host's skill loader tools -> the argument naming the skill (a host fact).
    """

    workspace: str
    config_revision: str
    offers: Mapping[str, Offer] = attrs.field(factory=dict)
    loaders: Mapping[str, str] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class Settled:
    """The samples of one settled family: one per workspace it had something available in, root's first."""

    family_id: str
    workspaces: tuple[FamilySample, ...] = ()


def real_workspace(path: Path) -> str:
    """The resolved real path credited for ``path`` (symlinks and ``..`` resolved, as the host's may not be)."""
    return str(Path(path).resolve())


@attrs.define
class _Family:
    """What the observer has seen of one family so far (mutable; never leaves the observer)."""

    agents: dict[str, AgentOffers] = attrs.field(factory=dict)
    """Session id -> what that agent had available (merged over its start and resumes)."""
    used: dict[str, dict[str, Disclosure]] = attrs.field(factory=dict)
    """Session id -> identity -> the disclosure it had when first used."""
    prior: tuple[FamilySample, ...] = ()
    """Samples settled earlier (restored from the family record on resume): a revision keeps their bits."""
    shapes: dict[str, dict[str, Learned]] = attrs.field(factory=dict)
    """Session id -> identity -> the shape of its ok results so far and how many (ADR 0102)."""


Learned = tuple[dict[str, Any], int]
"""A shape (:mod:`.shapes`) and the number of results it was learned from."""


class FamilyObserver:
    """Collects availability and use per session family; builds samples when the family settles.

    Cheap on the hot path: a dispatch is one dictionary lookup and, the first
    time, one insertion, so a loop of 10,000 nested calls costs nothing to speak of.
    """

    def __init__(self) -> None:
        self._families: dict[str, _Family] = {}

    def hold(self, family_id: str, session_id: str, offers: AgentOffers) -> None:
        """An agent's plan was held (start, resume or fork): what it makes available joins its family.

        A resumed agent keeps what it had available before (a capability once
        available stays so for the family); the first revision and disclosure seen win.
        """
        family = self._families.setdefault(family_id, _Family())
        before = family.agents.get(session_id)
        if before is not None:
            offers = attrs.evolve(
                offers,
                offers={**offers.offers, **before.offers},
                loaders={**offers.loaders, **before.loaders},
                config_revision=before.config_revision,
            )
        family.agents[session_id] = offers

    def restore(self, family_id: str, prior: Sequence[FamilySample]) -> None:
        """Add samples the family settled with before (a resumed family revises them; evidence only grows)."""
        if prior:
            family = self._families.setdefault(family_id, _Family())
            family.prior = (*family.prior, *(p for p in prior if p not in family.prior))

    def dispatching(self, call: ToolCall, spec: ToolSpec) -> None:
        """The host runs ``call``'s ``tool-execute`` seam: the call reached its owner, so it is use."""
        self._use(call, spec.identity)

    def dispatched(self, call: ToolCall, spec: ToolSpec, result: ToolResult) -> None:
        """The call settled: a host skill loader that returned its body used that skill; an ok result of a
        tool without an output schema teaches its shape (never its value: :func:`.shapes.derive`)."""
        agent = self._agent(call)
        if agent is None or not result.ok:
            return
        offer = agent.offers.get(spec.identity)
        if offer is not None and offer.learn_shape:
            learned = self._families[call.caller.family_id].shapes.setdefault(call.caller.session_id, {})
            shape, count = learned.get(spec.identity, (None, 0))
            learned[spec.identity] = (merge_shapes(shape, derive_shape(result.value)), count + 1)
        argument = agent.loaders.get(spec.name)
        if argument is not None and isinstance(skill := call.arguments.get(argument), str):
            self._use(call, KINDS[CapabilityKind.SKILL].prefix + skill)

    def _agent(self, call: ToolCall) -> AgentOffers | None:
        family = self._families.get(call.caller.family_id)
        return family.agents.get(call.caller.session_id) if family is not None else None

    def _use(self, call: ToolCall, identity: str) -> None:
        family = self._families.get(call.caller.family_id)
        agent = family.agents.get(call.caller.session_id) if family is not None else None
        if family is None or agent is None:
            return  # an agent whose plan the plugin never held: nothing to credit it against
        offer = agent.offers.get(identity)
        if offer is None:
            return  # not available to this agent (unmanaged, late, another scope's): no evidence
        family.used.setdefault(call.caller.session_id, {}).setdefault(identity, offer.disclosure)

    def settle(self, family_id: str, root_session_id: str, started: Collection[str]) -> Settled:
        """The family's samples now, one per workspace (root's first).

        :param started: the session ids of the members the host ever did work
            for; an agent merely created made nothing available (it is not a sample).
        """
        family = self._families.get(family_id)
        if family is None:
            return Settled(family_id=family_id)
        agents = {sid: offers for sid, offers in family.agents.items() if sid in started}
        return family_samples(family_id, root_session_id, agents, family.used, family.prior, family.shapes)


def family_samples(
    family_id: str,
    root_session_id: str,
    agents: Mapping[str, AgentOffers],
    used: Mapping[str, Mapping[str, Disclosure]],
    prior: Sequence[FamilySample] = (),
    shapes: Mapping[str, Mapping[str, Learned]] | None = None,
) -> Settled:
    """The pure rule: credit each capability to the workspaces of the agents that had it available.

    Per workspace and capability: available if any agent there had it, used if
    any agent there used it while it had it, its revision and disclosure those
    of the first use (else of the first agent offering it, root first). ``prior``
    samples (an earlier settlement of the same family) keep their bits: a
    resumed family only ever adds use to its own sample. Learned ``shapes`` (per agent and identity) are merged
    per workspace with the prior samples' (their results counted once: a resume observes only new ones).
    """
    order = sorted(agents, key=lambda sid: (sid != root_session_id, sid))
    per_ws: dict[str, dict[str, Evidence]] = {}
    revisions: dict[str, str] = {}
    learned: dict[tuple[str, str], Learned] = {}
    for sample in prior:
        revisions.setdefault(sample.workspace, sample.plan_config_revision)
        found = per_ws.setdefault(sample.workspace, {})
        for evidence in sample.evidence:
            known = found.get(evidence.identity)
            if known is None or (evidence.used and not known.used):
                found[evidence.identity] = evidence
            if evidence.shape is not None:
                _learn(learned, (sample.workspace, evidence.identity), (evidence.shape, evidence.results))
    for sid in order:
        agent = agents[sid]
        revisions.setdefault(agent.workspace, agent.config_revision)
        found = per_ws.setdefault(agent.workspace, {})
        agent_used = used.get(sid, {})
        for identity, offer in agent.offers.items():
            known = found.get(identity)
            at_use = agent_used.get(identity)
            if known is None or (at_use is not None and not known.used):
                found[identity] = _evidence(offer, at_use)
        for identity, seen in (shapes or {}).get(sid, {}).items():
            if identity in agent.offers:
                _learn(learned, (agent.workspace, identity), seen)
    for (ws, identity), (shape, count) in learned.items():
        known = per_ws[ws].get(identity)
        if known is not None:
            per_ws[ws][identity] = attrs.evolve(known, shape=shape, results=count)
    root_ws = agents[root_session_id].workspace if root_session_id in agents else None
    ordered = sorted(per_ws, key=lambda ws: (ws != root_ws, ws))
    samples = tuple(
        FamilySample(
            family_id=family_id,
            workspace=ws,
            plan_config_revision=revisions[ws],
            evidence=tuple(per_ws[ws][i] for i in sorted(per_ws[ws])),
        )
        for ws in ordered
        if per_ws[ws]
    )
    return Settled(family_id=family_id, workspaces=samples)


def _learn(learned: dict[tuple[str, str], Learned], key: tuple[str, str], seen: Learned) -> None:
    before = learned.get(key)
    learned[key] = seen if before is None else (merge_shapes(before[0], seen[0]), before[1] + seen[1])


def _evidence(offer: Offer, at_use: Disclosure | None) -> Evidence:
    return Evidence(
        identity=offer.identity,
        revision=offer.revision,
        disclosure=at_use or offer.disclosure,
        used=at_use is not None,
        schema_revision=offer.schema_revision,
    )


def union(samples: Sequence[FamilySample]) -> FamilySample | None:
    """One family's samples as one: the user-global scope counts a family once, however many workspaces."""
    if not samples:
        return None
    merged: dict[str, Evidence] = {}
    learned: dict[tuple[str, str], Learned] = {}
    for sample in samples:
        for evidence in sample.evidence:
            known = merged.get(evidence.identity)
            if known is None or (evidence.used and not known.used):
                merged[evidence.identity] = evidence
            if evidence.shape is not None:
                _learn(learned, ("", evidence.identity), (evidence.shape, evidence.results))
    for (_, identity), (shape, count) in learned.items():
        merged[identity] = attrs.evolve(merged[identity], shape=shape, results=count)
    first = samples[0]
    return FamilySample(
        family_id=first.family_id,
        workspace=first.workspace,
        plan_config_revision=first.plan_config_revision,
        evidence=tuple(merged[i] for i in sorted(merged)),
    )


def recording_scopes(workspace: str) -> tuple[bool, bool]:
    """Whether ``workspace``'s families are recorded, and whether they also count in the user-global store.

    Recorded: management and ``[statistics] enabled`` both on in its effective config (a problem there
    disables them); management is on by default (ADR 0080), so a workspace gets a statistics file
    unless it turns either off. Shared: ``[statistics] share_with_user``. One config load answers both.
    """
    config = load_config(Path(workspace)).config
    recorded = config.management.enabled and config.statistics.enabled
    return recorded, recorded and config.statistics.share_with_user


def learns_shapes(workspace: str) -> bool:
    """``[statistics] learn_output_shapes`` in ``workspace``'s effective config (ADR 0102)."""
    return load_config(Path(workspace)).config.statistics.learn_output_shapes


def without_shapes(sample: FamilySample) -> FamilySample:
    """``sample`` with nothing learned about results (its workspace turned learning off)."""
    if all(e.shape is None for e in sample.evidence):
        return sample
    return attrs.evolve(sample, evidence=tuple(attrs.evolve(e, shape=None, results=0) for e in sample.evidence))


def record_settled(
    settled: Settled,
    *,
    scopes: Callable[[str], tuple[bool, bool]] = recording_scopes,
    learns: Callable[[str], bool] = learns_shapes,
    workspace_for: Callable[[Path], StatisticsStore] = workspace_store,
    user: Callable[[], StatisticsStore] = user_store,
) -> list[str]:
    """Record ``settled`` in the stores of every workspace that has statistics enabled, and once in the user's.

    A workspace with ``[statistics] learn_output_shapes = false`` records no learned shape (``learns``).
    A workspace with statistics disabled contributes to no scope; one that does not share with the user
    (``[statistics] share_with_user = false``, e.g. the demo's) only to its own. Store
    problems (a corrupt or future-version file refusing the write, a lock
    timeout, a read-only disk) are logged and returned as text, never
    raised: statistics never block a session.

    :returns: one line per problem (empty when everything was recorded).
    """
    decided = [
        (
            without_shapes(sample)
            if any(e.shape is not None for e in sample.evidence) and not learns(sample.workspace)
            else sample,
            *scopes(sample.workspace),
        )
        for sample in settled.workspaces
    ]
    problems: list[str] = []
    for sample, recorded, _ in decided:
        if recorded:
            problems.extend(_record(functools.partial(workspace_for, Path(sample.workspace)), sample))
    merged = union(tuple(sample for sample, _, shared in decided if shared))
    if merged is not None:
        problems.extend(_record(user, merged))
    return problems


def _record(open_store: Callable[[], StatisticsStore], sample: FamilySample) -> Iterable[str]:
    try:
        store = open_store()
        store.record(sample)
    except (PtcError, OSError) as error:
        text = f"{error.code}: {error}" if isinstance(error, PtcError) else f"{type(error).__name__}: {error}"
        _log.warning("statistics of family %s not recorded: %s", sample.family_id, text)
        return [text]
    return []
