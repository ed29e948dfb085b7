"""Folding samples into a store's payload: the idempotent upsert and the bounds (ADR 0066).

Pure functions of the payload: the store (:mod:`.store`) applies them under its lock, a reader applies the
waiting intake (:mod:`.intake`) the same way in memory.
"""

from __future__ import annotations

import bisect
import datetime
from collections.abc import Callable, Sequence

import attrs

from ptc_plus.statistics.codec import (
    CapabilityRecord,
    FamilyRecord,
    LearnedRecord,
    RevisionRecord,
    Sequences,
    StatisticsFile,
    family_key,
)
from ptc_plus.statistics.sample import Evidence, FamilySample
from ptc_plus.statistics.shapes import merge as merge_shapes

RETIRED_CAP = 1000
"""Keys of displaced families remembered so a late revision of one changes nothing."""
MAX_CAPABILITIES = 10_000


def today() -> str:
    """The UTC day a shape recorded now is learned since (``2026-12-01``)."""
    return datetime.datetime.now(datetime.UTC).date().isoformat()


def apply(payload: StatisticsFile, sample: FamilySample, *, day: str | None = None) -> StatisticsFile:
    """``payload`` with ``sample`` added (new family) or revised in place (known family); unchanged for a
    family displaced earlier, or a new family with no evidence (it has no place in any window).

    Touches only the capabilities of the sample (and, for a revision, those holding the family's number):
    a store of 1,000 capabilities is not rebuilt for every family."""
    return apply_keyed(
        payload, family_key(sample.family_id), sample.plan_config_revision, sample.evidence, day=day or today()
    )


def apply_keyed(
    payload: StatisticsFile, key: str, plan_config_revision: str, evidence: Sequence[Evidence], *, day: str
) -> StatisticsFile:
    """:func:`apply` for a family known by its key (a sample from the intake holds no family id)."""
    if key in payload.retired:
        return payload
    families = payload.families
    index = next((i for i, family in enumerate(families) if family.key == key), None)
    capabilities = payload.capabilities
    if index is not None:
        sequence = families[index].sequence
        next_sequence = payload.next_sequence
        record = FamilyRecord(key=key, sequence=sequence, plan_config_revision=plan_config_revision)
        families = (*families[:index], record, *families[index + 1 :])
        capabilities = _without(capabilities, sequence)
    elif evidence:
        sequence = payload.next_sequence
        next_sequence = sequence + 1
        families = (
            *families,
            FamilyRecord(key=key, sequence=sequence, plan_config_revision=plan_config_revision),
        )
    else:
        return payload
    by_identity = {capability.identity: capability for capability in capabilities}
    for item in evidence:
        by_identity[item.identity] = _with(by_identity.get(item.identity), item, sequence, day)
    return attrs.evolve(
        payload,
        next_sequence=next_sequence,
        families=families,
        capabilities=tuple(by_identity[identity] for identity in sorted(by_identity)),
    )


def compact(payload: StatisticsFile, *, retention: int) -> StatisticsFile:
    """Keep per capability the newest ``retention`` families where it was available, at most
    :data:`MAX_CAPABILITIES` identities, and only the families still needed; remember dropped families."""
    capabilities: list[CapabilityRecord] = []
    for capability in payload.capabilities:
        if sum(len(entry.available) for entry in capability.revisions) <= retention:
            capabilities.append(capability)
            continue
        floor = sorted(s for entry in capability.revisions for s in entry.available)[-retention]
        capabilities.append(_filtered(capability, floor.__le__))  # keeps sequence >= floor
    if len(capabilities) > MAX_CAPABILITIES:
        # The identities available longest ago go first (ties: by identity, so every writer drops the same).
        ranked = sorted(capabilities, key=lambda c: (max(entry.available[-1] for entry in c.revisions), c.identity))
        dropped_identities = {c.identity for c in ranked[: len(capabilities) - MAX_CAPABILITIES]}
        capabilities = [c for c in capabilities if c.identity not in dropped_identities]
    needed: set[int] = set().union(*(entry.available for c in capabilities for entry in c.revisions))
    families = tuple(family for family in payload.families if family.sequence in needed)
    records = tuple(capabilities)
    if len(families) == len(payload.families) and records == payload.capabilities:
        return payload
    dropped = tuple(family.key for family in payload.families if family.sequence not in needed)
    return attrs.evolve(
        payload, families=families, retired=(payload.retired + dropped)[-RETIRED_CAP:], capabilities=records
    )


def _without(capabilities: tuple[CapabilityRecord, ...], sequence: int) -> tuple[CapabilityRecord, ...]:
    """``capabilities`` without any sample of the family numbered ``sequence`` (empty records dropped)."""
    kept: list[CapabilityRecord] = []
    for capability in capabilities:
        if any(sequence in entry.available for entry in capability.revisions):
            filtered = _filtered(capability, lambda s: s != sequence)
            if filtered.revisions:
                kept.append(filtered)
        else:
            kept.append(capability)
    return tuple(kept)


def _filtered(capability: CapabilityRecord, keep: Callable[[int], bool]) -> CapabilityRecord:
    revisions = []
    for entry in capability.revisions:
        available = Sequences(tuple(s for s in entry.available if keep(s)))
        if available:
            revisions.append(
                attrs.evolve(
                    entry,
                    available=available,
                    used=Sequences(tuple(s for s in entry.used if keep(s))),
                    on_demand=Sequences(tuple(s for s in entry.on_demand if keep(s))),
                    learned=_learned_filtered(entry.learned, keep),
                )
            )
    return attrs.evolve(capability, revisions=tuple(revisions))


def _learned_filtered(learned: LearnedRecord | None, keep: Callable[[int], bool]) -> LearnedRecord | None:
    """The counts of the families kept; the shape stays (it is a union: a displaced family's results widened it
    and a later result may still look like them)."""
    if learned is None:
        return None
    pairs = [(f, n) for f, n in zip(learned.families, learned.results, strict=True) if keep(f)]
    return attrs.evolve(
        learned, families=Sequences(tuple(f for f, _ in pairs)), results=Sequences(tuple(n for _, n in pairs))
    )


def _learned_with(learned: LearnedRecord | None, evidence: Evidence, sequence: int, day: str) -> LearnedRecord | None:
    """``learned`` widened by the family's shape (ADR 0102): the union, and the family's result count."""
    if evidence.shape is None or evidence.results < 1:
        return learned
    if learned is None:
        return LearnedRecord(
            shape=merge_shapes(None, evidence.shape),
            since=day,
            families=Sequences((sequence,)),
            results=Sequences((evidence.results,)),
        )
    counts = dict(zip(learned.families, learned.results, strict=True))
    counts[sequence] = evidence.results  # a revised family replaces its own count
    order = sorted(counts)
    return LearnedRecord(
        shape=merge_shapes(learned.shape, evidence.shape),
        since=min(learned.since, day),
        families=Sequences(tuple(order)),
        results=Sequences(tuple(counts[f] for f in order)),
    )


def _with(capability: CapabilityRecord | None, evidence: Evidence, sequence: int, day: str) -> CapabilityRecord:
    """``capability`` (or a new record) with the family numbered ``sequence`` added to the evidence's revision."""
    revisions = list(capability.revisions) if capability is not None else []
    where = (evidence.revision, evidence.schema_revision)
    index = next((i for i, e in enumerate(revisions) if (e.revision, e.schema_revision) == where), None)
    if index is None:
        empty = Sequences(())
        entry = RevisionRecord(
            revision=evidence.revision,
            schema_revision=evidence.schema_revision,
            available=empty,
            used=empty,
            on_demand=empty,
        )
        revisions.append(entry)
        revisions.sort(key=lambda e: (e.revision, e.schema_revision))
        index = revisions.index(entry)
    entry = revisions[index]
    revisions[index] = attrs.evolve(
        entry,
        available=_inserted(entry.available, sequence),
        used=_inserted(entry.used, sequence) if evidence.used else entry.used,
        on_demand=_inserted(entry.on_demand, sequence) if evidence.disclosure == "on-demand" else entry.on_demand,
        learned=_learned_with(entry.learned, evidence, sequence, day),
    )
    return CapabilityRecord(identity=evidence.identity, revisions=tuple(revisions))


def _inserted(sequences: Sequences, sequence: int) -> Sequences:
    if not sequences or sequences[-1] < sequence:
        return Sequences((*sequences, sequence))  # a new family: always the newest
    position = bisect.bisect_left(sequences, sequence)
    return Sequences((*sequences[:position], sequence, *sequences[position:]))


__all__ = ["MAX_CAPABILITIES", "RETIRED_CAP", "apply", "apply_keyed", "compact", "today"]
