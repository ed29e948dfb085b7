"""What a session's model was shown of contracts beyond the catalog, and what it used (ADR 0070).

A program's ``capabilities.search``/``inspect`` delivers complete contracts to
the *program*; the session then offers them to the *model* once, as an
expansion message (:mod:`.contract_messages`), so later cells call them
without searching again. After a compaction the session re-delivers, once,
what the model used and can no longer see. Both need to remember, per
session:

- which contracts were expanded, at which contract revision;
- which context message on the surface carries each one (its provenance);
- which expanded contracts the session then used, most recent first;
- whether a compaction left a recovery owing.

That memory is a frozen :class:`ContractMemory`, changed only by the four
events below, each persisted as a session record when it happens, so a
resumed session replays the records into the same memory
(:func:`replay`). Losing a record (unreadable, or never written because the
host stopped) costs at most a re-delivery or a missed one, never the session.

An offered message counts as shown at once: a step that aborts after the
plugin answered loses that message, and the model can look the contract up
again (the program's own answer carried it too).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping, Sequence

import attrs
from cattrs import BaseValidationError

from hookspecs import AgentRef, CompactionInfo, SessionRecord
from hookspecs.serialization import structure, unstructure
from ptc_plus.session.delivery import COMPACTED_KIND
from ptc_plus.session.projection import CATALOG_PROVENANCE

EXPANSION_PROVENANCE = "ptc-plus:expansion"
"""Prefix of expansion messages' provenances: each is ``ptc-plus:expansion:<n>``, never superseding another."""
RECOVERY_PROVENANCE = "ptc-plus:recovery"
"""The compaction-recovery message: a later recovery supersedes the earlier one."""

EXPANDED_KIND = "ptc-contracts-expanded/v1"
USED_KIND = "ptc-contract-used/v1"
RECOVERED_KIND = "ptc-contracts-recovered/v1"
VERSION = 1

_log = logging.getLogger(__name__)


@attrs.frozen
class Contract:
    """One capability's contract at one revision."""

    identity: str
    revision: str


@attrs.frozen(kw_only=True)
class Expanded:
    """Payload of ``ptc-contracts-expanded/v1``: contracts a discovery answer expanded, and the message that
    carries the ones offered to the model (``provenance`` ``None``: none fitted its budget)."""

    version: int = VERSION
    contracts: tuple[Contract, ...]
    provenance: str | None = None
    shown: tuple[str, ...] = ()


@attrs.frozen(kw_only=True)
class Used:
    """Payload of ``ptc-contract-used/v1``: an expanded contract reached its owner (top-level or nested)."""

    version: int = VERSION
    identity: str


@attrs.frozen(kw_only=True)
class Compacted:
    """Payload of ``ptc-contracts-compacted/v1``: the host compacted; only ``kept`` provenances survived
    (``None``: a 1.2 host that does not say, so none did)."""

    version: int = VERSION
    kept: tuple[str, ...] | None = None


@attrs.frozen(kw_only=True)
class Recovered:
    """Payload of ``ptc-contracts-recovered/v1``: the recovery owed after a compaction was settled.

    ``shown``: the contracts the recovery message carries (``None``: no message was needed or none fitted);
    ``named``: the ones it only names (over the recovery budget).
    """

    version: int = VERSION
    shown: tuple[str, ...] | None = None
    named: tuple[str, ...] = ()


Event = Expanded | Used | Compacted | Recovered
_KINDS: Mapping[str, type[Event]] = {
    EXPANDED_KIND: Expanded,
    USED_KIND: Used,
    COMPACTED_KIND: Compacted,
    RECOVERED_KIND: Recovered,
}
_RECORD_KINDS: Mapping[type[Event], str] = {kind: name for name, kind in _KINDS.items()}


def to_record(event: Event) -> SessionRecord:
    return SessionRecord(kind=_RECORD_KINDS[type(event)], version=VERSION, payload=unstructure(event))


@attrs.frozen(kw_only=True)
class ContractMemory:
    """A session's memory of contracts shown beyond the catalog; changed only through :meth:`apply`.

    :ivar expanded: identity -> the revision it was last expanded at.
    :ivar shown: identity -> the provenance of the context message on the surface that carries its contract.
    :ivar used: expanded identities that reached their owner since, most recently used first.
    :ivar messages: expansion messages offered so far (the next one is ``ptc-plus:expansion:<messages + 1>``).
    :ivar recovery_due: a compaction happened and its recovery was not offered yet.
    """

    expanded: Mapping[str, str] = attrs.field(factory=dict)
    shown: Mapping[str, str] = attrs.field(factory=dict)
    used: tuple[str, ...] = ()
    messages: int = 0
    recovery_due: bool = False

    def next_expansion(self) -> str:
        return f"{EXPANSION_PROVENANCE}:{self.messages + 1}"

    def visible(self, identity: str, revision: str) -> bool:
        """Whether a message on the surface carries ``identity``'s contract at ``revision``."""
        return identity in self.shown and self.expanded.get(identity) == revision

    def apply(self, event: Event) -> ContractMemory:
        """The memory after ``event`` (the same function replays the records on resume)."""
        if isinstance(event, Expanded):
            expanded = dict(self.expanded) | {c.identity: c.revision for c in event.contracts}
            # A re-expanded contract at a new revision is no longer what its old message shows, and its use
            # was of the old contract: recovery re-delivers only what was used at the revision expanded.
            shown = {i: p for i, p in self.shown.items() if expanded.get(i) == self.expanded.get(i)}
            used = tuple(i for i in self.used if expanded.get(i) == self.expanded.get(i))
            messages = self.messages
            if event.provenance is not None:
                shown |= dict.fromkeys(event.shown, event.provenance)
                messages += 1
            return attrs.evolve(self, expanded=expanded, shown=shown, used=used, messages=messages)
        if isinstance(event, Used):
            if event.identity not in self.expanded:
                return self
            used = (event.identity, *(i for i in self.used if i != event.identity))
            return attrs.evolve(self, used=used)
        if isinstance(event, Compacted):
            kept = frozenset(event.kept or ())
            shown = {i: p for i, p in self.shown.items() if p in kept}
            return attrs.evolve(self, shown=shown, recovery_due=True)
        if event.shown is None:
            return attrs.evolve(self, recovery_due=False)
        # The new recovery message supersedes the previous one: what only it carried is gone with it.
        shown = {i: p for i, p in self.shown.items() if p != RECOVERY_PROVENANCE}
        shown |= dict.fromkeys(event.shown, RECOVERY_PROVENANCE)
        return attrs.evolve(self, shown=shown, recovery_due=False)

    def use(self, identity: str) -> Used | None:
        """The event recording that ``identity`` reached its owner, if that changes the memory.

        Only expanded contracts are remembered, and a use that is already the
        latest changes nothing (a loop calling one tool writes one record).
        """
        if identity not in self.expanded or (self.used and self.used[0] == identity):
            return None
        return Used(identity=identity)


def catalog_kept(compaction: CompactionInfo) -> bool:
    """Whether the catalog message survived ``compaction`` (a 1.2 host that does not say: it did not)."""
    return compaction.kept_provenances is not None and CATALOG_PROVENANCE in compaction.kept_provenances


def replay(records: Sequence[SessionRecord]) -> ContractMemory:
    """The memory the session's records describe (oldest first); an unreadable record is skipped, logged."""
    memory = ContractMemory()
    for record in records:
        kind = _KINDS.get(record.kind)
        if kind is None:
            continue
        try:
            if record.version != VERSION:
                raise ValueError(f"record version {record.version}")
            event = structure(dict(record.payload), kind)
        except (BaseValidationError, TypeError, ValueError, KeyError) as error:
            _log.warning("unreadable %s record skipped; contract recovery may miss or repeat: %s", record.kind, error)
            continue
        memory = memory.apply(event)
    return memory


class ContractDesk:
    """Per host: every session's :class:`ContractMemory`, and the hand-over from the discovery thread.

    :meth:`expanded` is the one method called off the event loop (from the
    discovery thread); it only queues, under a lock, what the next model step
    of that session takes with :meth:`take`.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._inbox: dict[str, list[Contract]] = {}
        self._memories: dict[str, ContractMemory] = {}

    def expanded(self, agent: AgentRef, contracts: Sequence[tuple[str, str]]) -> None:
        """A discovery answer for ``agent`` delivered ``(identity, revision)`` in full (any thread)."""
        with self._lock:
            self._inbox.setdefault(agent.session_id, []).extend(Contract(i, r) for i, r in contracts)

    def take(self, agent: AgentRef) -> tuple[Contract, ...]:
        """What was expanded for ``agent`` since the last take, in arrival order."""
        with self._lock:
            return tuple(self._inbox.pop(agent.session_id, ()))

    def memory(self, agent: AgentRef) -> ContractMemory:
        return self._memories.get(agent.session_id, ContractMemory())

    def record(self, agent: AgentRef, event: Event) -> SessionRecord:
        """Apply ``event`` to ``agent``'s memory; the record the caller persists for it."""
        self._memories[agent.session_id] = self.memory(agent).apply(event)
        return to_record(event)

    def restore(self, agent: AgentRef, records: Sequence[SessionRecord]) -> None:
        """Rebuild ``agent``'s memory from its records (resume)."""
        self._memories[agent.session_id] = replay(records)
