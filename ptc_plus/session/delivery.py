"""What the session's surface shows under the catalog's provenance, proven from the host's commits.

The plugin *offers* a context message from ``agent_host_context_messages``;
the host *commits* it only after every plugin answered, and a step that
aborts commits nothing (hookspecs/specs.py). So an offer is recorded as
delivered only once something proves the step went ahead:

- a later step of the same turn (steps of a turn are sequential: step
  ``n + 1`` is only requested after step ``n`` was sent), or
- the settling of the offer's turn (every step of a settled turn was accepted).

An offer nothing has proven yet is simply made again at the next step: if it
was in fact committed, the new message supersedes it on the surface (same
provenance), so the model never sees it twice and never misses it.

Two record kinds say what was proven, the later one winning:
``ptc-catalog-delivered/v1`` (the code-mode catalog) and
``ptc-catalog-withdrawn/v1`` (the notice that superseded it when the session
went native). A third, ``ptc-catalog-offered/v1``, is written when a catalog
is offered: an offer nothing proved before the host stopped may still be on
the surface, so a session resumed native supersedes it with the notice too.

Each record also names the refresh whose catalog it carries (``refresh``,
0 for the plan of session start; absent in records from before refreshes,
which read as 0). A refresh that applied a newer environment wants its
catalog delivered again, with the refresh notice on top (ADR 0068); once
proven, the catalog of that refresh is what the surface carries.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import Any

import attrs

from hookspecs import SessionRecord, StepInfo
from ptc_plus.session.projection import CATALOG_PROVENANCE

DELIVERED_KIND = "ptc-catalog-delivered/v1"
WITHDRAWN_KIND = "ptc-catalog-withdrawn/v1"
OFFERED_KIND = "ptc-catalog-offered/v1"
COMPACTED_KIND = "ptc-contracts-compacted/v1"
"""Written at each compaction (:mod:`.contract_memory`); says which context messages it kept."""


class Shown(enum.StrEnum):
    """What the surface carries under the catalog's provenance."""

    NOTHING = "nothing"
    CATALOG = "catalog"
    NOTICE = "notice"
    """The code-mode catalog was superseded: code mode is off for the session now."""
    UNPROVEN = "unproven"
    """A code-mode catalog was offered and never proven committed: the surface may carry it (or not)."""


_KINDS = {DELIVERED_KIND: Shown.CATALOG, WITHDRAWN_KIND: Shown.NOTICE}


@attrs.frozen(kw_only=True)
class Offer:
    """A message handed to the host at ``(turn, step)``, not yet proven committed."""

    shown: Shown
    turn: int
    step: int
    refresh: int = 0


@attrs.frozen(kw_only=True)
class Delivery:
    """Proven surface state plus the latest unproven offer."""

    shown: Shown = Shown.NOTHING
    offer: Offer | None = None
    refresh: int = 0
    """The refresh whose catalog (or notice) :attr:`shown` is (0: the plan of session start)."""

    def wanted(self, code_mode: bool, refresh: int = 0) -> Shown | None:
        """What to offer now: the catalog under code mode (again after refresh ``refresh`` applied a
        newer plan), a notice when a native session's surface still carries a code-mode catalog, else nothing."""
        if code_mode:
            return Shown.CATALOG if self.shown is not Shown.CATALOG or self.refresh < refresh else None
        return Shown.NOTICE if self.shown in (Shown.CATALOG, Shown.UNPROVEN) else None

    def carries_catalog(self) -> bool:
        """Whether the surface may carry a code-mode catalog (so a new one is news about a change)."""
        return self.shown in (Shown.CATALOG, Shown.UNPROVEN)

    def proven_by_step(self, step: StepInfo) -> bool:
        """Whether ``step`` proves the pending offer was committed (a later step of its turn)."""
        return self.offer is not None and step.turn == self.offer.turn and step.step > self.offer.step

    def proven_by_turn(self, turn: int) -> bool:
        """Whether the settling of ``turn`` proves the pending offer was committed."""
        return self.offer is not None and self.offer.turn == turn


def delivery_from(records: Sequence[SessionRecord]) -> Delivery:
    """What the session's surface carries, from its delivery records (oldest first; the latest proof wins).

    A catalog offered after the latest proof may have been committed: :attr:`Shown.UNPROVEN`
    (unless the proof already covers the offer's refresh). A compaction that did not keep the
    catalog's message (``ptc-contracts-compacted/v1``, ADR 0070) leaves nothing under its provenance.
    """
    found, refresh = Shown.NOTHING, 0
    for record in records:
        offered = _refresh_of(record)
        if record.kind == COMPACTED_KIND:
            if not _kept_catalog(record):
                found = Shown.NOTHING
        elif record.kind == OFFERED_KIND:
            if found is not Shown.CATALOG or offered > refresh:
                found = Shown.UNPROVEN
        elif record.kind in _KINDS:
            found, refresh = _KINDS[record.kind], offered
    return Delivery(shown=found, refresh=refresh)


def dropped(delivery: Delivery) -> Delivery:
    """The delivery after a compaction that did not keep the catalog's message: nothing is shown, the catalog
    (or the notice) is owed again; the refresh it came from is kept, so no refresh notice repeats."""
    return Delivery(shown=Shown.NOTHING, refresh=delivery.refresh)


def _kept_catalog(record: SessionRecord) -> bool:
    kept = record.payload.get("kept") if isinstance(record.payload, dict) else None
    return isinstance(kept, list) and CATALOG_PROVENANCE in kept


def _refresh_of(record: SessionRecord) -> int:
    value = record.payload.get("refresh", 0) if isinstance(record.payload, dict) else 0
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def offer_record(offer: Offer) -> SessionRecord:
    """The record saying a catalog was handed to the host at ``offer`` (it may be committed, or not)."""
    payload = {"version": 1, "turn": offer.turn, "step": offer.step, "refresh": offer.refresh}
    return SessionRecord(kind=OFFERED_KIND, payload=payload)


def proof_record(offer: Offer, reason: str = "") -> SessionRecord:
    """The record saying ``offer`` was committed by the host."""
    kind = DELIVERED_KIND if offer.shown is Shown.CATALOG else WITHDRAWN_KIND
    payload: dict[str, Any] = {"version": 1, "turn": offer.turn, "step": offer.step, "refresh": offer.refresh}
    if reason:
        payload["reason"] = reason
    return SessionRecord(kind=kind, payload=payload)
