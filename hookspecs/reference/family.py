"""Session families in the reference host: lineage from the logs, live work, settlement (contract 1.2, ADR 0065).

An agent is live while a turn runs for it or a direct call is in flight
(:meth:`Families.work`). When the last live work of a family in this host
ends, the host surveys the family from its lineage — the loaded sessions'
events, the other members' logs read from disk — and, if no member is open
in another host and some member started, persists a ``family-settled`` event
and calls ``agent_host_family_settled``.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from typing import TYPE_CHECKING

from hookspecs.reference.errors import HostError
from hookspecs.reference.session_log import Event, open_elsewhere, read_events
from hookspecs.serialization import structure
from hookspecs.types import AgentRef, FamilyMember, FamilySettlement, SessionInfo

if TYPE_CHECKING:
    from hookspecs.reference.host import ReferenceHost
    from hookspecs.reference.session import Session

SETTLED = "family-settled"
"""The event persisting one settlement: ``{"generation": n, "members": [session ids]}``."""

_WORK = frozenset({"user-message", "tool-started", "tool-settled", "tool-abandoned"})
"""Events that exist only once the host did work for the agent: a turn began or a call was handled."""

_log = logging.getLogger(__name__)


class Lineage:
    """What one session's own log says about its family, applied event by event.

    A live session applies each event as it appends it and a resumed one
    replays its log through the same method, so both know the same.
    """

    def __init__(self) -> None:
        self.children: list[str] = []
        """Session ids of the agents forked from this one, in fork order."""
        self.started = False
        self.generation = 0
        """The latest settlement generation persisted in this log (0: none)."""

    def apply(self, event: Event) -> None:
        if event.type == "child-forked":
            self.children.append(str(event.data["child_session_id"]))
        elif event.type in _WORK:
            self.started = True
        elif event.type == SETTLED:
            self.generation = max(self.generation, int(event.data["generation"]))

    @classmethod
    def of(cls, events: list[Event]) -> Lineage:
        lineage = cls()
        for event in events:
            lineage.apply(event)
        return lineage


class Families:
    """Live work per family in one host, and the settlement when it ends."""

    def __init__(self, host: ReferenceHost) -> None:
        self._host = host
        self._live: dict[str, int] = {}
        """Family id → units of work in progress in this host (absent: none)."""

    def live(self, family_id: str) -> bool:
        return family_id in self._live

    @contextlib.contextmanager
    def work(self, session: Session) -> Iterator[None]:
        """Keep ``session``'s family live for the block; settle it if the block ended its last work.

        The settlement runs however the block ends (return, failure,
        cancellation): the agent is at rest either way. It never raises.
        """
        family = session.agent.family_id
        self._live[family] = self._live.get(family, 0) + 1
        try:
            yield
        finally:
            left = self._live.pop(family) - 1
            if left:
                self._live[family] = left
            else:
                self._settle(session)

    def _settle(self, ended: Session) -> None:
        host = self._host
        if host.closed:  # plugins are shutting down or gone: no seam runs any more
            return
        try:
            settlement = self.survey(ended.agent.family_id)
            if settlement is None:
                return
            # The root's log holds the family's settlements when this host has it open; else the log of
            # the agent whose work ended (the next survey reads every member's log for the generation).
            sink = host.loaded(settlement.family_id) or ended
            members = [m.agent.session_id for m in settlement.members]
            sink.append(SETTLED, {"generation": settlement.generation, "members": members}, durable=True)
        except Exception as exc:  # an unreadable lineage or a failed append proves nothing: no settlement
            _log.warning("family %s not settled", ended.agent.family_id, exc_info=exc)
            host.facade.reports.append(f"agent_host_family_settled: {exc}")
            return
        host.facade.family_settled(settlement, host.services)

    def survey(self, family_id: str) -> FamilySettlement | None:
        """The family's settlement as its lineage stands now, or ``None`` when it cannot be one.

        ``None`` when work of the family is in progress here, a member's log is
        open in another host (it may be running there), or no member started.
        Raises :class:`HostError` when a member's log is missing or corrupt.
        """
        if self.live(family_id):
            return None
        members: list[FamilyMember] = []
        generation = 0
        pending = [family_id]
        while pending:
            session_id = pending.pop()
            loaded = self._host.loaded(session_id)
            if loaded is not None:
                info, lineage = loaded.info, loaded.lineage
            else:
                path = self._host.log_path(session_id)
                if open_elsewhere(path):
                    return None
                events = read_events(path)
                if not events or events[0].type != "session-started":
                    raise HostError("HOST-0306", path=str(path))
                info, lineage = structure(events[0].data["info"], SessionInfo), Lineage.of(events)
            members.append(FamilyMember(agent=info.agent, workspace=info.workspace, started=lineage.started))
            generation = max(generation, lineage.generation)
            pending.extend(reversed(lineage.children))  # depth-first, in fork order
        if not any(m.started for m in members):
            return None
        root: AgentRef = members[0].agent
        return FamilySettlement(family_id=family_id, root=root, members=tuple(members), generation=generation + 1)
