"""The statistics store of one scope: a workspace's ``.ptc-plus/statistics.json`` or the user's own.

Contract (ADR 0066):

- :meth:`StatisticsStore.record` is an idempotent upsert keyed by the family:
  a family seen for the first time gets the next eligibility sequence number;
  a family recorded again (resumed and settled again) is revised in place and
  keeps its number, so it never jumps to the front of a window. Recording the
  same sample twice leaves the file byte for byte as it was (not even
  rewritten).
- Writers serialize on an ``flock`` of the directory holding the file (no
  lock file; released when the process dies, also by ``SIGKILL``), read the
  whole store, and replace it atomically (temporary file, ``fsync``,
  ``rename``): a reader or a writer killed at any moment sees the old or the
  new store, never a mix. Temporary files a killed writer left behind are
  removed by the next writer, under the lock.
- The store is bounded: per capability, only the newest ``retention`` families
  where it was available are kept (the window can never need more); families
  no capability still needs are dropped and their keys remembered (bounded) so
  they cannot come back; at most :data:`MAX_CAPABILITIES` identities are kept
  (those available longest ago go first).
- :meth:`StatisticsStore.read` never raises. A missing store, a damaged one
  (truncated, not JSON, not the format, not a regular file) and one written by
  a newer release each lose the vote with their own code. A damaged file is
  copied aside (``<name>.corrupt-<digest>``) and never overwritten:
  :meth:`~StatisticsStore.record` refuses with :class:`StatisticsStoreCorrupt`
  (the caller logs it) until :meth:`~StatisticsStore.reset`. A newer format is
  left untouched the same way. A legal older format is migrated in memory; the
  first write keeps the original beside it as ``<name>.v<n>.bak``.
- The workspace store is reached beneath the workspace without following
  symlinks (:mod:`hookspecs.workspace_files`), as the config writer does.
"""

from __future__ import annotations

import bisect
import contextlib
import errno
import fcntl
import hashlib
import logging
import os
import re
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Literal

import attrs
import cattrs
import orjson

from hookspecs.workspace_files import (
    PathNotFound,
    WorkspacePathError,
    open_directory,
    read_bytes,
    replace_file,
    workspace_root,
)
from ptc_plus.config import user_config_file
from ptc_plus.errors import PtcError
from ptc_plus.migration import MigrationError, VersionTooNew
from ptc_plus.statistics.codec import (
    EMPTY,
    MIGRATIONS,
    VERSION,
    CapabilityRecord,
    FamilyRecord,
    Inconsistent,
    RevisionRecord,
    Sequences,
    StatisticsFile,
    decode,
    describe,
    encode,
    family_key,
    parse,
)
from ptc_plus.statistics.errors import (
    StatisticsMissing,
    StatisticsStoreCorrupt,
    StatisticsStoreFutureVersion,
    StatisticsStoreUnwritable,
)
from ptc_plus.statistics.revisions import carries_over
from ptc_plus.statistics.sample import Evidence, FamilySample

_log = logging.getLogger(__name__)

FILE_NAME = "statistics.json"
WORKSPACE_DIR = ".ptc-plus"
LOCK_WAIT_S = 10.0
"""How long a writer waits for another writer's lock before giving up on this family (PTC-5004, logged)."""

DEFAULT_RETENTION = 200
"""Families kept per capability: ten times the default window (20); a window above it sees at most this many."""
RETIRED_CAP = 1000
"""Keys of displaced families remembered so a late revision of one changes nothing."""
MAX_CAPABILITIES = 10_000
MAX_BYTES = 64 << 20
"""A store larger than this is not read (damaged or not ours); the bounds keep a real one far below."""

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


@attrs.frozen
class _Loaded:
    view: StoreView
    raw: bytes | None = None


class StatisticsStore:
    """One scope's store at ``path``.

    ``root`` is the directory opened by name (the workspace for a workspace store); the rest of the path is
    resolved beneath it without following symlinks. Without ``root`` the file's own directory is the root,
    created when missing (the user config directory). ``retention``: families kept per capability.
    """

    def __init__(
        self,
        path: Path,
        *,
        root: Path | None = None,
        retention: int = DEFAULT_RETENTION,
        lock_wait_s: float = LOCK_WAIT_S,
    ) -> None:
        if retention < 1:
            raise ValueError(f"retention must be at least 1, got {retention}")
        self.path = path
        self.root = root if root is not None else path.parent
        self._create_root = root is None
        relative = path.relative_to(self.root)
        if not relative.parts:
            raise ValueError(f"{path} names the root itself")
        self._directory = relative.parent.as_posix()
        self._name = relative.name
        self.retention = retention
        self.lock_wait_s = lock_wait_s

    def __repr__(self) -> str:
        return f"StatisticsStore({str(self.path)!r})"

    # -- reading ---------------------------------------------------------------------------------------

    def read(self) -> StoreView:
        """The store as it is now. Never raises: every problem is a status with a typed ``problem``."""
        try:
            return self._load(self._read_raw(), preserve=True).view
        except Exception as exc:  # a bug or an exotic OS error must not block a session: no vote, said why
            _log.exception("reading the statistics store %s failed", self.path)
            return StoreView(path=self.path, status="corrupt", problem=self._corrupt(str(exc), None))

    def _read_raw(self) -> bytes | Exception | None:
        try:
            with workspace_root(self.root) as root:
                return read_bytes(root, f"{self._directory}/{self._name}", max_bytes=MAX_BYTES + 1)
        except PathNotFound:
            return None
        except (WorkspacePathError, OSError) as exc:
            return exc

    def _load(self, raw: bytes | Exception | None, *, preserve: bool, directory: int | None = None) -> _Loaded:
        if raw is None:
            return _Loaded(StoreView(path=self.path, status="missing", problem=StatisticsMissing(file=str(self.path))))
        if isinstance(raw, Exception):
            detail = raw.strerror if isinstance(raw, OSError) and raw.strerror else str(raw)
            return _Loaded(StoreView(path=self.path, status="corrupt", problem=self._corrupt(detail, None)))
        if len(raw) > MAX_BYTES:
            return self._damaged(raw, f"larger than {MAX_BYTES} bytes", preserve=preserve, directory=directory)
        try:
            data = parse(raw)
            upgraded = MIGRATIONS.upgrade(data)
            payload = decode(upgraded.data)
        except VersionTooNew as exc:
            problem = StatisticsStoreFutureVersion(file=str(self.path), found=exc.found, supported=VERSION)
            return _Loaded(StoreView(path=self.path, status="future-version", problem=problem), raw)
        except (orjson.JSONDecodeError, cattrs.BaseValidationError, Inconsistent, MigrationError) as exc:
            return self._damaged(raw, describe(exc), preserve=preserve, directory=directory)
        view = StoreView(path=self.path, status="ok", from_version=upgraded.from_version, payload=payload)
        return _Loaded(view, raw)

    def _damaged(self, raw: bytes, detail: str, *, preserve: bool, directory: int | None) -> _Loaded:
        kept = self._preserve(raw, directory) if preserve else None
        view = StoreView(path=self.path, status="corrupt", problem=self._corrupt(detail, kept), kept=kept)
        return _Loaded(view, raw)

    def _corrupt(self, detail: str, kept: Path | None) -> StatisticsStoreCorrupt:
        return StatisticsStoreCorrupt(file=str(self.path), detail=detail, kept=str(kept) if kept else "-")

    def _preserve(self, raw: bytes, directory: int | None) -> Path | None:
        """Copy a damaged file aside, named by its content, so it is kept once however often it is read."""
        name = f"{self._name}.corrupt-{hashlib.sha256(raw).hexdigest()[:12]}"
        try:
            if directory is not None:
                self._write_once(directory, name, raw)
            else:
                with workspace_root(self.root) as root:
                    fd = open_directory(root, self._directory)
                    try:
                        self._write_once(fd, name, raw)
                    finally:
                        os.close(fd)
        except (WorkspacePathError, OSError):
            _log.warning("could not keep a copy of the damaged statistics store %s", self.path, exc_info=True)
            return None
        return self.path.with_name(name)

    def _keep_original(self, directory: int, version: int, raw: bytes) -> None:
        """Keep the file an older release wrote as ``<name>.v<n>.bak`` before it is replaced; should that name
        hold other bytes already (an earlier original), this one is kept under a name with its digest."""
        name = f"{self._name}.v{version}.bak"
        try:
            existing = read_bytes(directory, name, max_bytes=MAX_BYTES + 1)
        except PathNotFound:
            existing = raw
            replace_file(directory, name, raw, create_parents=False)
        if existing != raw:
            self._write_once(directory, f"{self._name}.v{version}-{hashlib.sha256(raw).hexdigest()[:12]}.bak", raw)

    @staticmethod
    def _write_once(directory: int, name: str, data: bytes) -> None:
        with contextlib.suppress(FileNotFoundError):
            os.stat(name, dir_fd=directory, follow_symlinks=False)
            return
        replace_file(directory, name, data, create_parents=False)

    # -- writing ---------------------------------------------------------------------------------------

    def record(self, sample: FamilySample) -> None:
        """Add the family's sample, or revise it in place when the family is already recorded.

        :raises StatisticsStoreCorrupt: the store is damaged (kept aside, not touched).
        :raises StatisticsStoreFutureVersion: the store has a newer format (not touched).
        :raises StatisticsStoreUnwritable: the file cannot be written (permissions, a full disk, a symlink).
        """
        with self._locked(create=True) as directory:
            assert directory is not None
            self._sweep(directory)
            loaded = self._load(self._read_in(directory), preserve=True, directory=directory)
            view = loaded.view
            if view.status in ("corrupt", "future-version"):
                assert view.problem is not None
                raise view.problem
            before = view.payload if view.status == "ok" else EMPTY
            after = compact(apply(before, sample), retention=self.retention)
            if after == before and view.from_version in (VERSION, None):
                return  # idempotent: the same sample again leaves the file alone (and creates none)
            if loaded.raw is not None and view.from_version is not None and view.from_version != VERSION:
                self._keep_original(directory, view.from_version, loaded.raw)
            self._replace(directory, encode(after))

    def reset(self) -> None:
        """Forget every sample: the store becomes ``missing``. A damaged file is copied aside first;
        earlier copies and backups stay.

        :raises StatisticsStoreUnwritable: the file cannot be removed.
        """
        with self._locked(create=False) as directory:
            if directory is None:
                return
            raw = self._read_in(directory)
            if isinstance(raw, bytes):
                self._load(raw, preserve=True, directory=directory)  # keeps a damaged file aside
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self._name, dir_fd=directory)

    def _read_in(self, directory: int) -> bytes | Exception | None:
        try:
            return read_bytes(directory, self._name, max_bytes=MAX_BYTES + 1)
        except PathNotFound:
            return None
        except (WorkspacePathError, OSError) as exc:
            return exc

    def _replace(self, directory: int, data: bytes) -> None:
        try:
            replace_file(directory, self._name, data, create_parents=False)
        except (WorkspacePathError, OSError) as exc:
            raise self._unwritable(exc) from None

    def _unwritable(self, exc: Exception) -> StatisticsStoreUnwritable:
        detail = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        return StatisticsStoreUnwritable(file=str(self.path), detail=detail)

    @contextlib.contextmanager
    def _locked(self, *, create: bool) -> Iterator[int | None]:
        """The store's directory, opened beneath the root and locked (``None`` when missing and not created).

        System errors inside the block become :class:`StatisticsStoreUnwritable`.
        """
        directory = self._open_directory(create=create)
        try:
            if directory is not None:
                self._lock(directory)
            yield directory
        except (WorkspacePathError, OSError) as exc:
            raise self._unwritable(exc) from None
        finally:
            if directory is not None:
                os.close(directory)  # releases the lock

    def _lock(self, directory: int) -> None:
        """Take the writers' lock, waiting at most :attr:`lock_wait_s`: recording runs inside a host's settlement,
        and a writer stopped while holding the lock (SIGSTOP, a hung disk) must not stall that host for ever."""
        deadline = time.monotonic() + self.lock_wait_s
        pause = 0.005
        while True:
            try:
                fcntl.flock(directory, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise OSError(
                        errno.EWOULDBLOCK, f"another writer held the lock for {self.lock_wait_s:g} s"
                    ) from None
                time.sleep(pause)
                pause = min(pause * 2, 0.1)

    def _open_directory(self, *, create: bool) -> int | None:
        try:
            if create and self._create_root:
                self.root.mkdir(parents=True, exist_ok=True)
            with workspace_root(self.root) as root:
                return open_directory(root, self._directory, create=create)
        except PathNotFound as exc:
            if create:
                raise self._unwritable(exc) from None
            return None
        except (WorkspacePathError, OSError) as exc:
            raise self._unwritable(exc) from None

    def _sweep(self, directory: int) -> None:
        """Remove temporary files of writers killed mid-write (no writer is active: we hold the lock)."""
        pattern = re.compile(rf"\.{re.escape(self._name[:64])}\.[0-9a-f]{{12}}\.tmp")
        for name in os.listdir(directory):
            if pattern.fullmatch(name):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(name, dir_fd=directory)


def apply(payload: StatisticsFile, sample: FamilySample) -> StatisticsFile:
    """``payload`` with ``sample`` added (new family) or revised in place (known family); unchanged for a
    family displaced earlier, or a new family with no evidence (it has no place in any window).

    Touches only the capabilities of the sample (and, for a revision, those holding the family's number):
    a store of 1,000 capabilities is not rebuilt for every family."""
    key = family_key(sample.family_id)
    if key in payload.retired:
        return payload
    families = payload.families
    index = next((i for i, family in enumerate(families) if family.key == key), None)
    capabilities = payload.capabilities
    if index is not None:
        sequence = families[index].sequence
        next_sequence = payload.next_sequence
        record = FamilyRecord(key=key, sequence=sequence, plan_config_revision=sample.plan_config_revision)
        families = (*families[:index], record, *families[index + 1 :])
        capabilities = _without(capabilities, sequence)
    elif sample.evidence:
        sequence = payload.next_sequence
        next_sequence = sequence + 1
        families = (
            *families,
            FamilyRecord(key=key, sequence=sequence, plan_config_revision=sample.plan_config_revision),
        )
    else:
        return payload
    by_identity = {capability.identity: capability for capability in capabilities}
    for evidence in sample.evidence:
        by_identity[evidence.identity] = _with(by_identity.get(evidence.identity), evidence, sequence)
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
                )
            )
    return attrs.evolve(capability, revisions=tuple(revisions))


def _with(capability: CapabilityRecord | None, evidence: Evidence, sequence: int) -> CapabilityRecord:
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
    )
    return CapabilityRecord(identity=evidence.identity, revisions=tuple(revisions))


def _inserted(sequences: Sequences, sequence: int) -> Sequences:
    if not sequences or sequences[-1] < sequence:
        return Sequences((*sequences, sequence))  # a new family: always the newest
    position = bisect.bisect_left(sequences, sequence)
    return Sequences((*sequences[:position], sequence, *sequences[position:]))


def workspace_store(workspace: Path, *, retention: int = DEFAULT_RETENTION) -> StatisticsStore:
    """``<workspace>/.ptc-plus/statistics.json``; ``workspace`` should be the resolved real path."""
    return StatisticsStore(workspace / WORKSPACE_DIR / FILE_NAME, root=workspace, retention=retention)


def user_store(env: Mapping[str, str] | None = None, *, retention: int = DEFAULT_RETENTION) -> StatisticsStore:
    """``statistics.json`` beside the user config file (``$XDG_CONFIG_HOME/ptc-plus`` or ``~/.config/ptc-plus``)."""
    return StatisticsStore(user_config_file(env).with_name(FILE_NAME), retention=retention)


__all__ = [
    "DEFAULT_RETENTION",
    "FILE_NAME",
    "MAX_CAPABILITIES",
    "NO_SAMPLE",
    "RETIRED_CAP",
    "CapabilityStats",
    "StatisticsStore",
    "Status",
    "StoreView",
    "user_store",
    "workspace_store",
]
