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
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import Any

import attrs

from hookspecs import SessionRecord, StepInfo

DELIVERED_KIND = "ptc-catalog-delivered/v1"
WITHDRAWN_KIND = "ptc-catalog-withdrawn/v1"
OFFERED_KIND = "ptc-catalog-offered/v1"


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


@attrs.frozen(kw_only=True)
class Delivery:
    """Proven surface state plus the latest unproven offer."""

    shown: Shown = Shown.NOTHING
    offer: Offer | None = None

    def wanted(self, code_mode: bool) -> Shown | None:
        """What to offer now: the catalog under code mode, a notice when a native session's surface
        still carries a code-mode catalog, else nothing."""
        if code_mode:
            return Shown.CATALOG if self.shown is not Shown.CATALOG else None
        return Shown.NOTICE if self.shown in (Shown.CATALOG, Shown.UNPROVEN) else None

    def proven_by_step(self, step: StepInfo) -> bool:
        """Whether ``step`` proves the pending offer was committed (a later step of its turn)."""
        return self.offer is not None and step.turn == self.offer.turn and step.step > self.offer.step

    def proven_by_turn(self, turn: int) -> bool:
        """Whether the settling of ``turn`` proves the pending offer was committed."""
        return self.offer is not None and self.offer.turn == turn


def shown_from(records: Sequence[SessionRecord]) -> Shown:
    """What the session's surface carries, from its delivery records (oldest first; the latest proof wins).

    A catalog offered after the latest proof may have been committed: :attr:`Shown.UNPROVEN`.
    """
    found = Shown.NOTHING
    for record in records:
        if record.kind == OFFERED_KIND:
            found = Shown.UNPROVEN if found is not Shown.CATALOG else found
        else:
            found = _KINDS.get(record.kind, found)
    return found


def offer_record(offer: Offer) -> SessionRecord:
    """The record saying a catalog was handed to the host at ``offer`` (it may be committed, or not)."""
    return SessionRecord(kind=OFFERED_KIND, payload={"version": 1, "turn": offer.turn, "step": offer.step})


def proof_record(offer: Offer, reason: str = "") -> SessionRecord:
    """The record saying ``offer`` was committed by the host."""
    kind = DELIVERED_KIND if offer.shown is Shown.CATALOG else WITHDRAWN_KIND
    payload: dict[str, Any] = {"version": 1, "turn": offer.turn, "step": offer.step}
    if reason:
        payload["reason"] = reason
    return SessionRecord(kind=kind, payload=payload)
