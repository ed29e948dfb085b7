"""The expansion and the compaction-recovery messages: which contracts, within which budget (ADR 0070).

Both are pure functions of the session's :class:`~.contract_memory.ContractMemory`,
the plan's effective snapshot (what is valid now, at which revision), the
identities the catalog already carries in full, a token counter and a budget.
Each returns the event to record (which also moves the memory) and the
message to offer, if any. A contract is never cut to fit: what does not fit
is named on one line, and a message whose header and names alone exceed the
budget is not offered at all.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

import attrs

from hookspecs import ContextMessage, TokenCounter
from ptc_plus.capabilities import Capability, delivery_text
from ptc_plus.discovery import CatalogSnapshot
from ptc_plus.i18n import message
from ptc_plus.session.contract_memory import RECOVERY_PROVENANCE, Contract, ContractMemory, Expanded, Recovered
from ptc_plus.session.projection import MODEL_LANG


@attrs.frozen(kw_only=True)
class Fitted:
    """A message's text, the contracts it carries and the ones it only names."""

    text: str
    shown: tuple[Capability, ...]
    named: tuple[Capability, ...]


def fit(
    header: str, left_key: str, capabilities: Sequence[Capability], counter: TokenCounter, budget: int
) -> Fitted | None:
    """Complete contracts of ``capabilities``, in order, while the whole text costs at most ``budget``.

    The rest are named on one line (``left_key``); ``None`` when not even the
    header and the names fit.
    """

    def compose(shown: Sequence[Capability], named: Sequence[Capability]) -> str:
        parts = [header]
        if shown:
            parts.append(delivery_text(shown).rstrip())
        if named:
            parts.append(message(left_key, MODEL_LANG, names=", ".join(c.name for c in named)))
        return "\n\n".join(parts) + "\n"

    shown: list[Capability] = []
    for capability in capabilities:
        if counter.count(compose([*shown, capability], ())) <= budget:
            shown.append(capability)
    while True:
        named = [c for c in capabilities if c not in shown]
        text = compose(shown, named)
        if counter.count(text) <= budget:
            return Fitted(text=text, shown=tuple(shown), named=tuple(named))
        if not shown:
            return None
        shown.pop()  # the names line needs room too: give up the last contract taken


@attrs.frozen(kw_only=True)
class Offered:
    """What one step adds: the event to record (``None``: nothing changed) and the message to offer."""

    event: Expanded | Recovered | None = None
    message: ContextMessage | None = None
    diagnostics: tuple[str, ...] = ()


def superseded(memory: ContractMemory, snapshot: CatalogSnapshot, full: Collection[str]) -> tuple[Contract, ...]:
    """Contracts a message on the surface carries at a revision the session no longer offers, at the one it does.

    A refresh that revised a member (or a resume that follows the host's changed contract) leaves the model
    an expansion or recovery message with the old contract; offered again at the new revision (in the next
    expansion), the model's copy switches at the transition instead of when a program happens to look it up.
    Members the catalog carries in full are the catalog's to re-deliver; members gone from the plan are not
    offered at all.
    """
    found: list[Contract] = []
    for identity in sorted(memory.shown):
        capability = snapshot.get(identity)
        if identity in full or capability is None or capability.revision == memory.expanded.get(identity):
            continue
        found.append(Contract(identity, capability.revision))
    return tuple(found)


def expansion(
    memory: ContractMemory,
    incoming: Sequence[Contract],
    snapshot: CatalogSnapshot,
    full: Collection[str],
    counter: TokenCounter,
    budget: int,
) -> Offered:
    """The expansion message for contracts discovery delivered since the last step.

    Left out: what the catalog carries in full, what an earlier message on the
    surface carries at the same revision, and what the plan no longer holds
    at that revision (a refresh between the answer and now).
    """
    fresh: dict[str, Contract] = {}
    for contract in incoming:
        capability = snapshot.get(contract.identity)
        if contract.identity in full or capability is None or capability.revision != contract.revision:
            continue
        if not memory.visible(contract.identity, contract.revision):
            fresh[contract.identity] = contract
    if not fresh:
        return Offered()
    capabilities = [c for i in fresh if (c := snapshot.get(i)) is not None]
    header = message("ptc.expansion.header", MODEL_LANG)
    fitted = fit(header, "ptc.expansion.left-out", capabilities, counter, budget)
    contracts = tuple(fresh.values())
    if fitted is None or not fitted.shown:
        # Nothing fits: remember the expansion (recovery may still need it), offer nothing.
        return Offered(event=Expanded(contracts=contracts))
    provenance = memory.next_expansion()
    shown = tuple(c.identity for c in fitted.shown)
    event = Expanded(contracts=contracts, provenance=provenance, shown=shown)
    return Offered(event=event, message=ContextMessage(provenance=provenance, text=fitted.text))


def recovery(
    memory: ContractMemory,
    snapshot: CatalogSnapshot,
    full: Collection[str],
    counter: TokenCounter,
    budget: int,
    host: Mapping[str, str] | None = None,
) -> Offered:
    """The recovery owed after a compaction: contracts used (most recent first) after they were expanded,
    still valid (in the effective plan at the revision expanded, and still the host's) and no longer visible.

    Never the catalog's full set (the catalog re-delivers it) and never a
    contract only looked up. One that changed revision or left the plan is
    not re-sent; a diagnostic says so. Contracts the previous recovery message
    carries go again only with a new one, since the new one supersedes it.

    :param host: the host's contract revision now of the used members it still offers (``None``: not
        known). A live plan holds its contracts until a refresh, but one the host has since changed or
        dropped is stale, never "still valid": it is not re-sent, and the diagnostic points to the refresh.
    """
    candidates: list[Capability] = []
    missing = False
    diagnostics: list[str] = []
    for identity in memory.used:
        revision = memory.expanded.get(identity)
        if revision is None or identity in full:
            continue
        capability = snapshot.get(identity)
        if capability is None:
            diagnostics.append(message("ptc.recovery.gone", identity=identity))
            continue
        if capability.revision != revision:
            diagnostics.append(
                message("ptc.recovery.changed", identity=identity, old=revision, new=capability.revision)
            )
            continue
        if host is not None and (now := host.get(identity)) != revision:
            why = (
                message("ptc.recovery.host-changed", identity=identity, old=revision, new=now)
                if now is not None
                else message("ptc.recovery.host-gone", identity=identity)
            )
            diagnostics.append(why)
            continue
        where = memory.shown.get(identity)
        if where is None:
            missing = True
        elif where != RECOVERY_PROVENANCE:
            continue  # still on the surface
        candidates.append(capability)
    fitted = None
    if missing:
        header = message("ptc.recovery.header", MODEL_LANG)
        fitted = fit(header, "ptc.recovery.left-out", candidates, counter, budget)
    if fitted is None:
        return Offered(event=Recovered(), diagnostics=tuple(diagnostics))
    event = Recovered(shown=tuple(c.identity for c in fitted.shown), named=tuple(c.identity for c in fitted.named))
    offered = ContextMessage(provenance=RECOVERY_PROVENANCE, text=fitted.text)
    return Offered(event=event, message=offered, diagnostics=tuple(diagnostics))
