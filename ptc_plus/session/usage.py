"""A session's part in its family's usage statistics (ADR 0067).

:func:`agent_offers` says what one agent had available when its plan was
held. :class:`FamilyUsage` is the record ``ptc-family-usage/v1`` the plugin
writes into the root session when its family settles: the samples it
recorded, so that a family resumed in another process revises its own
sample (keeping the use seen before) rather than starting a new one from
nothing. It holds only identities, revisions and evidence bits, as the
store does. Reading it back restores what was already counted; it is never
a replay of the log's tool events, which are not use. :class:`UsageLedger`
is the controller's usage seam: it observes each family (what its agents had
available, what reached an owner) and records its sample when the host says
the family settled.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

import attrs
from cattrs import BaseValidationError

from hookspecs import (
    FamilySettlement,
    HostServices,
    SessionInfo,
    SessionRecord,
    SkillSpec,
    ToolCall,
    ToolResult,
    ToolSpec,
)
from hookspecs.serialization import structure, unstructure
from ptc_plus.capabilities import KINDS, Catalog, observed_kinds
from ptc_plus.config import Disclosure
from ptc_plus.session.environment import Environment
from ptc_plus.statistics import (
    AgentOffers,
    FamilyObserver,
    FamilySample,
    Offer,
    real_workspace,
    record_settled,
    schema_revision_of,
)

if TYPE_CHECKING:
    from ptc_plus.session.state import SessionState
    from ptc_plus.session.table import SessionTable

KIND = "ptc-family-usage/v1"
VERSION = 1

UNOBSERVABLE = frozenset(KINDS) - observed_kinds()
"""Kinds whose use no host fact reports (:attr:`~ptc_plus.capabilities.KindRow.observed`): never evidence, so
they show "no sample" instead of a 0 % that only says we could not see."""

_log = logging.getLogger(__name__)


@attrs.frozen(kw_only=True)
class FamilyUsage:
    """The payload of ``ptc-family-usage/v1``: a family's samples as last recorded, one per workspace."""

    version: int = VERSION
    family_id: str
    samples: tuple[FamilySample, ...]

    def to_record(self) -> SessionRecord:
        return SessionRecord(kind=KIND, version=VERSION, payload=unstructure(self))


def agent_offers(
    info: SessionInfo,
    environment: Environment | None,
    catalog: Catalog,
    skills: Sequence[SkillSpec],
    *,
    code_mode: bool,
) -> AgentOffers:
    """What ``info``'s agent can really call: under code mode its plan's effective set; otherwise (native,
    or no environment) the host's own provision, every managed capability of its view, ``full``.
    Capabilities whose use cannot be observed are left out (:data:`UNOBSERVABLE`)."""

    def shape(identity: str, revision: str) -> str:
        # The call shape of the contract the agent saw; unknown when the host's contract moved since.
        found = catalog.get(identity)
        return schema_revision_of(found) if found is not None and found.revision == revision else ""

    def learn(identity: str, revision: str) -> bool:
        # Results teach a shape only where the contract states none (ADR 0102); the config decides at settlement.
        found = catalog.get(identity)
        return (
            found is not None
            and found.revision == revision
            and found.spec is not None
            and (found.spec.output_schema is None)
        )

    if code_mode and environment is not None:
        offers = {
            e.identity: Offer(
                identity=e.identity,
                revision=e.revision,
                disclosure="full" if e.disclosure is Disclosure.FULL else "on-demand",
                schema_revision=shape(e.identity, e.revision),
                learn_shape=learn(e.identity, e.revision),
            )
            for e in environment.plan.effective()
            if e.kind not in UNOBSERVABLE
        }
    else:
        offers = {
            c.identity: Offer(
                identity=c.identity,
                revision=c.revision,
                disclosure="full",
                schema_revision=shape(c.identity, c.revision),
                learn_shape=learn(c.identity, c.revision),
            )
            for c in catalog.managed()
            if c.kind not in UNOBSERVABLE
        }
    return AgentOffers(
        workspace=real_workspace(info.workspace),
        config_revision=environment.config_revision if environment is not None else "",
        offers=offers,
        loaders={s.loader: s.loader_argument for s in skills},
    )


def prior_samples(records: Sequence[SessionRecord]) -> tuple[FamilySample, ...]:
    """The samples of the latest ``ptc-family-usage/v1`` record; none (logged) when it is unreadable."""
    found = [r for r in records if r.kind == KIND]
    if not found:
        return ()
    latest = found[-1]
    try:
        if latest.version != VERSION:
            raise ValueError(f"record version {latest.version}")
        return structure(dict(latest.payload), FamilyUsage).samples
    except (BaseValidationError, TypeError, ValueError, KeyError) as error:
        # Statistics never block a session: the family's earlier use is lost to its revision, nothing else.
        _log.warning("unreadable %s record; the family's earlier use is not carried: %s", KIND, error)
        return ()


class UsageLedger:
    """Each session family's usage as this controller observes it, and its samples once it settled (ADR 0067)."""

    def __init__(self, services: HostServices, table: SessionTable) -> None:
        self._services = services
        self._table = table
        self.observer = FamilyObserver()
        self._written: dict[str, FamilyUsage] = {}
        """Session id -> the family usage record last written into (or read from) that session's log."""

    def hold(self, state: SessionState, skills: Sequence[SkillSpec]) -> None:
        """What ``state``'s agent can call now it is held (start, resume, a refresh applied)."""
        agent = state.info.agent
        offers = agent_offers(state.info, state.environment, state.catalog, skills, code_mode=state.ptc)
        self.observer.hold(agent.family_id, agent.session_id, offers)

    def restore(self, info: SessionInfo, records: Sequence[SessionRecord]) -> None:
        """The family settled before, maybe in another process: its revision keeps the use counted then."""
        if prior := prior_samples(records):
            self.observer.restore(info.agent.family_id, prior)
            self._written[info.agent.session_id] = FamilyUsage(family_id=info.agent.family_id, samples=prior)

    def dispatching(self, call: ToolCall, spec: ToolSpec) -> None:
        self.observer.dispatching(call, spec)

    def dispatched(self, call: ToolCall, spec: ToolSpec, result: ToolResult) -> None:
        self.observer.dispatched(call, spec, result)

    def family_settled(self, family: FamilySettlement) -> None:
        """The host proved the family settled: record its samples (a later settlement revises them).

        Members merely created (never started) contribute nothing; a family
        none of whose members started is no sample. Store problems are logged,
        never raised (:func:`~ptc_plus.statistics.record_settled`). The samples
        are then written into each member this host holds whose log does not
        have them yet, so that resuming any of them, in another process too,
        revises the family's sample instead of starting over from what it sees anew.
        """
        started = {m.agent.session_id for m in family.members if m.started}
        settled = self.observer.settle(family.family_id, family.root.session_id, started)
        if not settled.workspaces:
            return
        record_settled(settled)
        usage = FamilyUsage(family_id=family.family_id, samples=settled.workspaces)
        for member in family.members:
            sid = member.agent.session_id
            if self._table.holds(sid) and self._written.get(sid) != usage:
                self._services.append_record(member.agent, usage.to_record())
                self._written[sid] = usage
