"""Where a session's journal lives: the :class:`JournalStore` seam and the directory store (ADR 0081).

A store only moves JSON objects: :meth:`JournalStore.read` gives every item in order (a decoded object,
or :class:`Unreadable` where a line cannot be decoded) and :meth:`JournalStore.append` adds one. What the
items mean is :mod:`ptc_plus.runtime.kernel.journal`'s business.

:class:`DirectoryStore` keeps ``journal.jsonl`` in a session directory, one JSON object per line. Appends
hold ``journal.lock`` (a :mod:`filelock`), write the whole line with ``O_APPEND`` and ``fsync`` before
returning, so a reader never sees a line of two writers and an acknowledged record survives a crash. A
crash mid-write leaves a torn last line: it reads as :class:`Unreadable`, and the next append starts on a
fresh line so the damage stays one item. ``session.lock`` is held by :meth:`DirectoryStore.exclusive` for a
whole invocation (one ``ptc-plus exec --session DIR`` at a time per session).

The session directory may sit where a program could reach it, so nothing follows a symbolic link at its
last component: the directory is opened with ``O_DIRECTORY | O_NOFOLLOW`` and its files relative to that
descriptor with ``O_NOFOLLOW``, and a file that is not regular is refused.

A journal is read only up to :data:`MAX_JOURNAL_BYTES`: a larger one is damage. It is renamed to
``journal.oversized.jsonl`` (replacing an earlier one) so that the next record starts a fresh journal,
and :class:`~.errors.JournalTooLarge` says so; nothing of it is read into memory (ADR 0085).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Protocol

import attrs
import orjson
from filelock import FileLock, Timeout

from hookspecs.serialization import canonical_bytes
from ptc_plus.runtime.kernel.errors import (
    JournalReadFailed,
    JournalTooLarge,
    JournalWriteFailed,
    SessionBusy,
    SessionDirRefused,
    SessionFileRefused,
)

JOURNAL = "journal.jsonl"
OVERSIZED = "journal.oversized.jsonl"
MAX_JOURNAL_BYTES = 32 * 1024 * 1024
"""The largest journal read (ADR 0085): eight cells at the per-cell cap of recorded calls, or thousands of
ordinary cells; decoding it costs the host a few times its size in memory."""
JOURNAL_LOCK = "journal.lock"
SESSION_LOCK = "session.lock"

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# O_NONBLOCK: opening a FIFO planted in place of the journal must not hang (it is refused after fstat).
_FILE_FLAGS = os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK


@attrs.frozen
class Unreadable:
    """An item of the journal that could not be decoded (torn or garbage line), with why."""

    reason: str


class JournalStore(Protocol):
    """Where a session's journal records are kept, in order."""

    def read(self) -> list[object]:
        """Every item in journal order: a decoded JSON object, or :class:`Unreadable`."""
        ...

    def append(self, record: Mapping[str, Any]) -> None:
        """Add one record (a JSON object) at the end; durable when this returns."""
        ...

    def marker(self) -> object:
        """A cheap value that differs whenever the journal has changed (compared with ``==``): a live
        kernel whose marker still matches reuses the records it holds instead of reading them again."""
        ...


class DirectoryStore:
    """A journal in a session directory (created with mode 0700 when missing).

    :raises SessionDirRefused: ``path`` is a symbolic link or not a directory.
    :raises JournalWriteFailed: the directory could not be created.
    """

    def __init__(self, path: str | os.PathLike[str], max_bytes: int = MAX_JOURNAL_BYTES) -> None:
        self.path = Path(path)
        self.max_bytes = max_bytes
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            os.mkdir(self.path, 0o700)
        except FileExistsError:
            pass  # an existing directory is used as it is; a symlink or file is refused on open
        except OSError as exc:
            raise JournalWriteFailed(path=self.path, detail=exc.strerror or str(exc)) from exc
        os.close(self._open_dir(JournalWriteFailed))

    def read(self) -> list[object]:
        """Every line of ``journal.jsonl`` in order (none when it does not exist yet).

        :raises JournalReadFailed: the OS refused to read it.
        :raises JournalTooLarge: it is over :attr:`max_bytes`; it has been set aside, unread.
        :raises SessionDirRefused, SessionFileRefused: a symlink or a non-regular file is in the way.
        """
        with self._locked(JournalReadFailed), self._directory(JournalReadFailed) as directory:
            try:
                fd = os.open(JOURNAL, os.O_RDONLY | _FILE_FLAGS, dir_fd=directory)
            except FileNotFoundError:
                return []
            except OSError as exc:
                raise self._file_error(exc, JournalReadFailed) from exc
            try:
                self._require_regular(fd)
                size = os.fstat(fd).st_size
                data = _read_all(fd, self.max_bytes + 1) if size <= self.max_bytes else b""
            except OSError as exc:
                raise JournalReadFailed(path=self.path, detail=exc.strerror or str(exc)) from exc
            finally:
                os.close(fd)
            if size > self.max_bytes or len(data) > self.max_bytes:
                self._set_aside(directory, max(size, len(data)))
        return _items(data)

    def _set_aside(self, directory: int, size: int) -> None:
        """Move an oversized journal out of the way (under the journal lock) and raise :class:`JournalTooLarge`."""
        try:
            os.rename(JOURNAL, OVERSIZED, src_dir_fd=directory, dst_dir_fd=directory)
            os.fsync(directory)
        except OSError as exc:
            raise JournalReadFailed(path=self.path, detail=exc.strerror or str(exc)) from exc
        raise JournalTooLarge(path=self.path / JOURNAL, size=size, limit=self.max_bytes, set_aside=OVERSIZED)

    def marker(self) -> object:
        """``(inode, size, mtime)`` of ``journal.jsonl`` (``None`` before it exists, or when it cannot be
        looked at: then it never matches a kept marker, and the journal is read)."""
        try:
            with self._directory(JournalReadFailed) as directory:
                found = os.stat(JOURNAL, dir_fd=directory, follow_symlinks=False)
        except (OSError, JournalReadFailed, SessionDirRefused):
            return None
        return (found.st_ino, found.st_size, found.st_mtime_ns)

    def append(self, record: Mapping[str, Any]) -> None:
        """Append ``record`` as one line and ``fsync`` it.

        :raises JournalWriteFailed: the OS refused the write (the record is not in the journal).
        :raises SessionDirRefused, SessionFileRefused: a symlink or a non-regular file is in the way.
        :raises TypeError: ``record`` is not JSON.
        """
        line = canonical_bytes(record) + b"\n"
        with self._locked(JournalWriteFailed), self._directory(JournalWriteFailed) as directory:
            created = False
            try:
                fd = os.open(JOURNAL, os.O_RDWR | os.O_APPEND | _FILE_FLAGS, dir_fd=directory)
            except FileNotFoundError:
                fd = self._create(directory)
                created = True
            except OSError as exc:
                raise self._file_error(exc, JournalWriteFailed) from exc
            try:
                self._require_regular(fd)
                size = os.fstat(fd).st_size
                if size and os.pread(fd, 1, size - 1) != b"\n":
                    line = b"\n" + line  # a torn last line stays one unreadable item, not two records
                _write_all(fd, line)
                os.fsync(fd)
                if created:
                    os.fsync(directory)  # the new file's name is durable too
            except OSError as exc:
                raise JournalWriteFailed(path=self.path, detail=exc.strerror or str(exc)) from exc
            finally:
                os.close(fd)

    @contextlib.contextmanager
    def exclusive(self, timeout: float) -> Iterator[None]:
        """Hold the session for the caller's whole invocation (not reentrant: a second hold, even from this
        process, is busy).

        :param timeout: seconds to wait for another holder (0: do not wait).
        :raises SessionBusy: another invocation still holds it after ``timeout``.
        """
        os.close(self._open_dir(JournalWriteFailed))
        lock = FileLock(str(self.path / SESSION_LOCK), timeout=timeout, mode=0o600)
        try:
            lock.acquire()
        except Timeout:
            raise SessionBusy(path=self.path, timeout=timeout) from None
        except OSError as exc:
            raise JournalWriteFailed(path=self.path, detail=exc.strerror or str(exc)) from exc
        try:
            yield
        finally:
            lock.release()

    def _open_dir(self, failure: type[JournalReadFailed | JournalWriteFailed]) -> int:
        try:
            return os.open(self.path, _DIR_FLAGS)
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                raise SessionDirRefused(path=self.path) from exc
            raise failure(path=self.path, detail=exc.strerror or str(exc)) from exc

    @contextlib.contextmanager
    def _directory(self, failure: type[JournalReadFailed | JournalWriteFailed]) -> Iterator[int]:
        fd = self._open_dir(failure)
        try:
            yield fd
        finally:
            os.close(fd)

    @contextlib.contextmanager
    def _locked(self, failure: type[JournalReadFailed | JournalWriteFailed]) -> Iterator[None]:
        os.close(self._open_dir(failure))  # refuse a swapped-in symlink before the lock file is made in it
        lock = FileLock(str(self.path / JOURNAL_LOCK), mode=0o600)
        try:
            lock.acquire()
        except OSError as exc:
            raise failure(path=self.path, detail=exc.strerror or str(exc)) from exc
        try:
            yield
        finally:
            lock.release()

    def _create(self, directory: int) -> int:
        try:
            return os.open(
                JOURNAL, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_EXCL | _FILE_FLAGS, 0o600, dir_fd=directory
            )
        except OSError as exc:
            raise self._file_error(exc, JournalWriteFailed) from exc

    def _file_error(
        self, exc: OSError, failure: type[JournalReadFailed | JournalWriteFailed]
    ) -> SessionFileRefused | JournalReadFailed | JournalWriteFailed:
        if exc.errno == errno.ELOOP:
            return SessionFileRefused(path=self.path / JOURNAL)
        return failure(path=self.path, detail=exc.strerror or str(exc))

    def _require_regular(self, fd: int) -> None:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise SessionFileRefused(path=self.path / JOURNAL)


def _read_all(fd: int, limit: int) -> bytes:
    """At most ``limit`` bytes of ``fd`` (a file that grows while it is read is not read further)."""
    chunks: list[bytes] = []
    left = limit
    while left > 0 and (chunk := os.read(fd, min(1 << 20, left))):
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        if written == 0:
            raise OSError(errno.EIO, "the journal accepted no bytes")
        view = view[written:]


def _items(data: bytes) -> list[object]:
    lines = data.split(b"\n")
    tail = lines.pop()  # b"" when the file ends with a line end
    items: list[object] = [_item(number, line) for number, line in enumerate(lines, start=1)]
    if tail:
        items.append(Unreadable(f"line {len(lines) + 1} is torn (no line end): {_excerpt(tail)}"))
    return items


def _item(number: int, line: bytes) -> object:
    if not line.strip():
        return Unreadable(f"line {number} is empty")
    try:
        value = orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        return Unreadable(f"line {number} is not JSON ({exc}): {_excerpt(line)}")
    if not isinstance(value, dict):
        return Unreadable(f"line {number} is not a JSON object: {_excerpt(line)}")
    return value


def _excerpt(line: bytes) -> str:
    text = line[:80].decode("utf-8", "replace")
    return text + ("..." if len(line) > 80 else "")
