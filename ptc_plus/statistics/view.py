"""What a read of a statistics store found: its status and, when ``ok``, the samples it answers from (ADR 0066)."""

from __future__ import annotations

import bisect
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import attrs

from ptc_plus.errors import PtcError
from ptc_plus.statistics.codec import EMPTY, CapabilityRecord, StatisticsFile
from ptc_plus.statistics.revisions import carries_over

Status = Literal["ok", "missing", "corrupt", "future-version"]


@attrs.frozen(kw_only=True)
class CapabilityStats:
    """One capability's usage in one scope over its window.

    ``available``: families in the window (the newest ``window`` eligible families where it was available);
    ``used``: how many of them used it; ``coverage`` = used / available, ``None`` when no family had it
    ("no sample", never 0 %); ``sufficient``: at least ``min_samples`` families (and at least one).
    """

    available: int
    used: int
    coverage: float | None
    sufficient: bool


NO_SAMPLE = CapabilityStats(available=0, used=0, coverage=None, sufficient=False)


@attrs.frozen(kw_only=True)
class LearnedShape:
    """The output shape learned for one contract revision (ADR 0102): a JSON Schema of types and field names
    (:mod:`.shapes`), how many results of the retained families it was learned from, and since which day."""

    identity: str
    revision: str
    shape: Mapping[str, Any]
    results: int
    since: str


@attrs.frozen(kw_only=True)
class StoreView:
    """What :meth:`StatisticsStore.read` found; answers questions without touching the file again.

    ``status`` is ``ok`` (also for a migrated older format: ``from_version`` says which), ``missing``,
    ``corrupt`` or ``future-version``; ``problem`` is the typed error saying why statistics have no vote
    (``None`` when ``ok``); ``kept`` is where a damaged file was copied aside. Only an ``ok`` view has
    samples: the others answer "no sample" for every capability.
    """

    path: Path
    status: Status
    problem: PtcError | None = None
    from_version: int | None = None
    kept: Path | None = None
    payload: StatisticsFile = attrs.field(default=EMPTY, repr=False)
    _by_identity: Mapping[str, CapabilityRecord] = attrs.field(
        default=attrs.Factory(lambda self: {c.identity: c for c in self.payload.capabilities}, takes_self=True),
        init=False,
        repr=False,
        eq=False,
    )

    @property
    def usable(self) -> bool:
        return self.status == "ok"

    def stats(
        self, identity: str, revision: str, *, window: int, min_samples: int, schema_revision: str = ""
    ) -> CapabilityStats:
        """``identity`` at contract ``revision`` (and call-shape ``schema_revision``, when known) over the
        newest ``window`` families where it was available; older revisions count as ADR 0066 rules
        (:func:`~ptc_plus.statistics.revisions.carries_over`)."""
        if window < 1:
            raise ValueError(f"window must be at least 1, got {window}")
        record = self._by_identity.get(identity)
        if record is None:
            return NO_SAMPLE
        counted = [
            entry
            for entry in record.revisions
            if carries_over(
                stored_revision=entry.revision,
                stored_schema_revision=entry.schema_revision,
                revision=revision,
                schema_revision=schema_revision,
            )
        ]
        # A read store is checked: each list ascending, used within available, and no sequence in two
        # revisions of one identity. So the window is the newest ``window`` numbers and its uses are the used
        # numbers at or above the window's oldest: a slice and a bisection, not a sort of every sample.
        if len(counted) == 1:
            recent: Sequence[int] = counted[0].available[-window:]
        else:
            recent = sorted(s for entry in counted for s in entry.available)[-window:]
        if not recent:
            return NO_SAMPLE
        oldest = recent[0]
        used_count = sum(len(entry.used) - bisect.bisect_left(entry.used, oldest) for entry in counted)
        return CapabilityStats(
            available=len(recent),
            used=used_count,
            coverage=used_count / len(recent),
            sufficient=len(recent) >= max(min_samples, 1),
        )

    def learned(self, identity: str, revision: str) -> LearnedShape | None:
        """The shape learned from results of ``identity`` at exactly contract ``revision`` (a new revision starts
        over); ``None`` when none was."""
        record = self._by_identity.get(identity)
        if record is None:
            return None
        for entry in record.revisions:
            if entry.revision == revision and entry.learned is not None:
                found = entry.learned
                return LearnedShape(
                    identity=identity,
                    revision=revision,
                    shape=found.shape,
                    results=sum(found.results),
                    since=found.since,
                )
        return None

    def all_learned(self) -> tuple[LearnedShape, ...]:
        """Every learned shape in the store, by identity then revision (``ptc-plus stats``)."""
        return tuple(
            found
            for record in self.payload.capabilities
            for entry in record.revisions
            if (found := self.learned(record.identity, entry.revision)) is not None
        )

    def families(self) -> int:
        """Eligible families ever recorded in this store (since its last reset); 0 unless ``ok``."""
        return self.payload.next_sequence - 1

    def retained_families(self) -> int:
        """Families whose samples are still kept (the rest were displaced by newer ones)."""
        return len(self.payload.families)

    def capabilities(self) -> tuple[str, ...]:
        """The identities with samples, sorted."""
        return tuple(self._by_identity)

    def latest_revision(self, identity: str) -> tuple[str, str] | None:
        """(contract revision, schema revision) of the newest sample of ``identity``; ``None`` without one."""
        record = self._by_identity.get(identity)
        if record is None:
            return None
        newest = max(record.revisions, key=lambda entry: entry.available[-1])
        return newest.revision, newest.schema_revision


__all__ = ["NO_SAMPLE", "CapabilityStats", "LearnedShape", "Status", "StoreView"]
