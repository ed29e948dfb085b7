"""The statistics store of one scope: a workspace's ``.ptc-plus/statistics.json`` or the user's own.

Contract (ADR 0066, ADR 0091):

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
- A writer that finds the lock busy puts its sample in the store's *intake*
  (:mod:`.intake`: one file per sample, no lock needed) and the writer holding
  the lock folds the whole intake in one replace (ADR 0091). Readers apply the
  intake to what they read, so a sample counts from the moment its intake
  file exists: a slow, unfair or stopped lock holder delays folding, never a
  sample.
- The invariants that make a ``SIGKILL`` at any instruction lose nothing
  that :meth:`~StatisticsStore.record` returned for (keep them when changing
  the fold): an intake file is removed only by the lock holder, only after a
  replace of the store that holds its sample (so a kill in between leaves the
  sample in both, and folding it again is an upsert that changes nothing);
  ``record`` returns only once its sample is in the store or in a published
  intake file; and a full intake makes a writer wait for the lock or for room
  for its ``lock_wait_s``, not refuse at once (a live holder folding a large
  intake fills it too; only one that keeps the lock that long is stopped).
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

import contextlib
import errno
import fcntl
import hashlib
import logging
import os
import re
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

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
from ptc_plus.migration import MigrationError, VersionTooNew
from ptc_plus.statistics.codec import (
    EMPTY,
    MIGRATIONS,
    VERSION,
    Inconsistent,
    StatisticsFile,
    decode,
    describe,
    encode,
    parse,
)
from ptc_plus.statistics.errors import (
    StatisticsMissing,
    StatisticsStoreCorrupt,
    StatisticsStoreFutureVersion,
    StatisticsStoreUnwritable,
)
from ptc_plus.statistics.intake import (
    MAX_PENDING,
    PendingDamaged,
    PendingSample,
    decode_pending,
    pending_names,
    read_pending,
    sweep_parts,
    write_pending,
)
from ptc_plus.statistics.sample import FamilySample
from ptc_plus.statistics.upsert import MAX_CAPABILITIES, RETIRED_CAP, apply, apply_keyed, compact, today
from ptc_plus.statistics.view import NO_SAMPLE, CapabilityStats, Status, StoreView

_log = logging.getLogger(__name__)

FILE_NAME = "statistics.json"
WORKSPACE_DIR = ".ptc-plus"
LOCK_WAIT_S = 10.0
"""How long a writer waits for the writers' lock before it leaves its sample in the intake for the next writer
to fold (ADR 0091): it bounds a host's stall in settlement, never what is recorded. ``reset`` gives up after it."""

DEFAULT_RETENTION = 200
"""Families kept per capability: ten times the default window (20); a window above it sees at most this many."""
MAX_BYTES = 64 << 20
"""A store larger than this is not read (damaged or not ours); the bounds keep a real one far below."""
_SNAPSHOT_TRIES = 5
"""A reader rereads when a writer replaced the store while it read the intake (a fold in between)."""


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
        """The store as it is now, with the samples waiting in its intake applied (in memory: reading writes
        nothing but the copy of a damaged file). Never raises: every problem is a status with a typed ``problem``."""
        try:
            return self._read_view()
        except Exception as exc:  # a bug or an exotic OS error must not block a session: no vote, said why
            _log.exception("reading the statistics store %s failed", self.path)
            return StoreView(path=self.path, status="corrupt", problem=self._corrupt(str(exc), None))

    def _read_view(self) -> StoreView:
        try:
            with workspace_root(self.root) as root:
                directory = open_directory(root, self._directory)
        except PathNotFound:
            return self._load(None, preserve=False).view
        except (WorkspacePathError, OSError) as exc:
            return self._load(exc, preserve=False).view
        try:
            # A writer folds the intake into the store, replaces the store, then removes the folded files. The
            # store read first and the same store still there after the intake was listed make a consistent
            # snapshot: an intake file folded meanwhile is applied again, which changes nothing (an upsert).
            for _ in range(_SNAPSHOT_TRIES):
                before = self._identity(directory)
                raw = self._read_in(directory)
                intake = self._intake(directory)
                if self._identity(directory) == before:
                    break
            view = self._load(raw, preserve=True, directory=directory).view
            return self._with_intake(view, intake, directory)
        finally:
            os.close(directory)

    def _identity(self, directory: int) -> tuple[int, int, int] | None:
        try:
            status = os.stat(self._name, dir_fd=directory, follow_symlinks=False)
        except OSError:
            return None
        return status.st_ino, status.st_mtime_ns, status.st_size

    def _intake(self, directory: int) -> list[tuple[str, PendingSample]] | PendingDamaged:
        """The samples waiting in the intake, oldest first (a damaged intake file: the error, with its bytes)."""
        found = []
        for name in pending_names(directory, self._name):
            try:
                raw = read_pending(directory, name)
                if raw is not None:
                    found.append((name, decode_pending(name, raw)))
            except PendingDamaged as damaged:
                return damaged
        return found

    def _with_intake(
        self, view: StoreView, intake: list[tuple[str, PendingSample]] | PendingDamaged, directory: int
    ) -> StoreView:
        if view.status in ("corrupt", "future-version"):
            return view
        if isinstance(intake, PendingDamaged):
            kept = self._preserve(intake.raw, directory) if intake.raw is not None else None
            return StoreView(path=self.path, status="corrupt", problem=self._corrupt(str(intake), kept), kept=kept)
        if not intake:
            return view
        payload = self._folded(view.payload if view.status == "ok" else EMPTY, [p for _, p in intake], None)
        return StoreView(path=self.path, status="ok", from_version=view.from_version or VERSION, payload=payload)

    def _folded(
        self, payload: StatisticsFile, intake: Sequence[PendingSample], sample: FamilySample | None
    ) -> StatisticsFile:
        """``payload`` after the intake (oldest first), then ``sample``, each applied as if recorded alone; the
        bounds are applied once at the end (once per sample made a fold of 30 samples of 300 capabilities take
        1.9 s instead of 0.4 s, ADR 0091). Only a family revised in the same fold after newer families in it
        displaced it can end up differently (kept, where one by one it would have been retired)."""
        folded = payload
        for pending in intake:
            folded = apply_keyed(
                folded, pending.key, pending.plan_config_revision, pending.evidence, day=pending.day or today()
            )
        if sample is not None:
            folded = apply(folded, sample)
        return compact(folded, retention=self.retention)

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

        With the writers' lock free, the sample (and the intake waiting beside the store) is folded into the
        store now. With it busy, the sample goes to the intake first, which needs no lock, and this call waits
        until it is folded (by this writer or by the one holding the lock) or :attr:`lock_wait_s` passed: then
        it stays in the intake, counted by every reader and folded by the next writer (logged). A slow or
        stuck writer never costs a sample (ADR 0091).

        A full intake (:data:`~ptc_plus.statistics.intake.MAX_PENDING` files) is no reason to refuse by
        itself: a live holder folding a large intake fills it too. The sample then waits for the lock (or for
        room in the intake) like any other, for :attr:`lock_wait_s`; only a lock held that long with the intake
        still full is a writer that does not fold (stopped), and that is refused.

        :raises StatisticsStoreCorrupt: the store is damaged (kept aside, not touched).
        :raises StatisticsStoreFutureVersion: the store has a newer format (not touched).
        :raises StatisticsStoreUnwritable: the sample could not be written (permissions, a full disk, a read-only
            file system, a symlink), or the intake stayed full while another writer held the lock for
            :attr:`lock_wait_s` (stopped).
        """
        directory = self._open_directory(create=True)
        assert directory is not None
        try:
            deadline = time.monotonic() + self.lock_wait_s
            own: str | None = None  # this sample's intake file, once published
            pause = 0.001
            while True:
                if self._try_lock(directory):
                    self._fold(directory, sample if own is None else None, own)
                    return
                if own is None:
                    own = self._enqueue(directory, sample)
                    if own is not None:
                        continue  # published: try the lock once more, then only watch for the fold
                elif not self._exists(directory, own):
                    return  # the writer holding the lock folded it
                if time.monotonic() >= deadline:
                    if own is None:
                        raise OSError(
                            errno.EWOULDBLOCK,
                            f"{MAX_PENDING} samples already wait for the writers' lock, held for"
                            f" {self.lock_wait_s:g} s by a writer that does not fold them (stopped)",
                        )
                    _log.warning(
                        "the statistics store %s stayed locked for %g s: the sample waits in %s for the next writer",
                        self.path,
                        self.lock_wait_s,
                        own,
                    )
                    return
                time.sleep(pause)
                pause = min(pause * 2, 0.02)  # a short pause: folding is someone else's, we only watch for it
        except (WorkspacePathError, OSError) as exc:
            raise self._unwritable(exc) from None
        finally:
            os.close(directory)  # releases the lock

    def _enqueue(self, directory: int, sample: FamilySample) -> str | None:
        """Publish ``sample`` in the intake; its file's name, or ``None`` when the intake is full (nothing
        written: the caller waits for the lock or for room)."""
        if len(pending_names(directory, self._name)) >= MAX_PENDING:
            return None
        return write_pending(directory, self._name, sample)

    @staticmethod
    def _exists(directory: int, name: str) -> bool:
        try:
            os.stat(name, dir_fd=directory, follow_symlinks=False)
        except FileNotFoundError:
            return False
        return True

    @staticmethod
    def _try_lock(directory: int) -> bool:
        try:
            fcntl.flock(directory, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def _fold(self, directory: int, sample: FamilySample | None, own: str | None) -> None:
        """Under the writers' lock: the intake (oldest first), then ``sample``, into the store in one replace;
        then the folded intake files are removed. ``own`` is this writer's intake file, removed when the store
        refuses (damaged or newer) so that it is not folded into a store after a reset."""
        self._sweep(directory)
        sweep_parts(directory, self._name)
        loaded = self._load(self._read_in(directory), preserve=True, directory=directory)
        view = loaded.view
        if view.status in ("corrupt", "future-version"):
            self._discard(directory, own)
            assert view.problem is not None
            raise view.problem
        intake = self._intake(directory)
        if isinstance(intake, PendingDamaged):
            self._discard(directory, own)
            problem = self._with_intake(view, intake, directory).problem
            assert problem is not None
            raise problem
        before = view.payload if view.status == "ok" else EMPTY
        after = self._folded(before, [p for _, p in intake], sample)
        if after != before or view.from_version not in (VERSION, None):
            # The same samples again leave the file alone (and create none): idempotent.
            if loaded.raw is not None and view.from_version is not None and view.from_version != VERSION:
                self._keep_original(directory, view.from_version, loaded.raw)
            self._replace(directory, encode(after))
        for name, _ in intake:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(name, dir_fd=directory)

    def _discard(self, directory: int, own: str | None) -> None:
        if own is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(own, dir_fd=directory)

    def reset(self) -> None:
        """Forget every sample, also those waiting in the intake: the store becomes ``missing``. A damaged file is
        copied aside first; earlier copies and backups stay.

        :raises StatisticsStoreUnwritable: the file cannot be removed, or another writer held the lock for
            :attr:`lock_wait_s`.
        """
        with self._locked(create=False) as directory:
            if directory is None:
                return
            raw = self._read_in(directory)
            if isinstance(raw, bytes):
                self._load(raw, preserve=True, directory=directory)  # keeps a damaged file aside
            intake = self._intake(directory)
            if isinstance(intake, PendingDamaged) and intake.raw is not None:
                self._preserve(intake.raw, directory)
            sweep_parts(directory, self._name)
            for name in pending_names(directory, self._name):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(name, dir_fd=directory)
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
