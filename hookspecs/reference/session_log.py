"""Append-only JSONL event log of one session.

Each line is one event ``{"v": 2, "seq": n, "type": ..., "data": {...}}``.
Version 2 events may carry a nested call's arguments or result elided to a
digest (:mod:`hookspecs.reference.log_bounds`); version 1 events are read as
they are, and a version this code does not know is not a valid event.
Every append is written with one ``write`` on an ``O_APPEND`` descriptor, so
a crash leaves at most one torn line at the end; :meth:`SessionLog.open`
detects it, moves the torn bytes aside to ``<log>.torn-<offset>`` (nothing
is deleted) and reports it, keeping every complete event before it.
Durability: a line is in the OS on return (survives the process); events
marked ``durable`` are also ``fsync``-ed (survive the machine).

Group commit (ADR 0114): an event appended with ``defer=True`` (a nested
call's ``tool-started``) is queued, and the queue is written with one
``write`` by the next :meth:`SessionLog.flush` or the next event appended
without ``defer``, whichever comes first. The dispatcher flushes in the
started call's task before the body runs; so calls admitted together share
one write, a settled call costs one write, and the guarantees stay: a
settle (and every event queued before it) is in the OS when ``append``
returns, a start before its body runs.

The log does not keep every event whole in memory (ADR 0087): events of
nested calls, and any event whose line is over :data:`KEPT_LINE_BYTES`, are
kept as their place in the file and read back when asked for
(:class:`Events`); opening a log reads it line by line, never whole.
"""

from __future__ import annotations

import array
import contextlib
import fcntl
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, overload

import attrs
import orjson

from hookspecs.i18n import message
from hookspecs.reference.errors import HostError
from hookspecs.serialization import canonical_bytes

LOG_VERSION = 2
_KNOWN_VERSIONS = frozenset({1, 2})
KEPT_LINE_BYTES = 64 * 1024
"""Events with longer lines are kept in memory only as their place in the file."""
_NESTED_TYPES = frozenset({"tool-started", "tool-settled", "tool-abandoned"})
_CHUNK = 1 << 20


@attrs.frozen(kw_only=True)
class Event:
    """One persisted event."""

    seq: int
    type: str
    data: dict[str, Any]
    v: int = LOG_VERSION


@attrs.frozen(kw_only=True)
class TornTail:
    """A torn last line found (and moved aside) when the log was opened."""

    offset: int
    size: int
    moved_to: Path

    def describe(self, lang: str | None = None) -> str:
        return message("host.torn-tail", lang, offset=self.offset, size=self.size, path=str(self.moved_to))


def _is_nested(type_: str, data: dict[str, Any]) -> bool:
    """An event of a nested call: nothing the session rebuilds (surface, lineage) needs its data."""
    return type_ in _NESTED_TYPES and data.get("parent_call_id") is not None


class Events(Sequence[Event]):
    """A log's events in order: small ones held, the others (nested calls, long lines) read back from the file.

    Holding an event costs its data; one read back costs 17 bytes here (its offset, length and a
    flag) and a read of its line when asked for. Equal to any sequence of the same events.
    """

    def __init__(self, path: Path) -> None:
        self._path = path
        self._offsets = array.array("q")
        self._sizes = array.array("q")
        self._nested = bytearray()
        self._types: list[str] = []
        self._held: dict[int, Event] = {}
        self._fd = -1

    def add(self, event: Event, offset: int, size: int) -> None:
        """Record ``event``, whose line (without its newline) is ``size`` bytes at ``offset``."""
        nested = _is_nested(event.type, event.data)
        if not nested and size <= KEPT_LINE_BYTES:
            self._held[len(self._types)] = event
        self._offsets.append(offset)
        self._sizes.append(size)
        self._nested.append(nested)
        self._types.append(event.type)

    def __len__(self) -> int:
        return len(self._types)

    @overload
    def __getitem__(self, index: int) -> Event: ...

    @overload
    def __getitem__(self, index: slice) -> list[Event]: ...

    def __getitem__(self, index: int | slice) -> Event | list[Event]:
        if isinstance(index, slice):
            return [self._event(i) for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        return self._event(index)

    def __iter__(self) -> Iterator[Event]:
        return (self._event(i) for i in range(len(self)))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]

    def of_type(self, *types: str, nested: bool = True) -> Iterator[Event]:
        """Events of ``types`` in order; ``nested=False`` skips nested calls' events without reading them."""
        wanted = set(types)
        for i, type_ in enumerate(self._types):
            if type_ in wanted and (nested or not self._nested[i]):
                yield self._event(i)

    def _event(self, index: int) -> Event:
        held = self._held.get(index)
        if held is not None:
            return held
        offset, size = self._offsets[index], self._sizes[index]
        if self._fd >= 0:
            line = os.pread(self._fd, size, offset)
        else:  # the log was closed: read this one event and let go of the file again
            with open(self._path, "rb") as fh:
                fh.seek(offset)
                line = fh.read(size)
        parsed = _parse(line)
        if parsed is None:
            raise HostError("HOST-0104", path=str(self._path), seq=index)
        return parsed

    def open_reader(self) -> None:
        self._fd = os.open(self._path, os.O_RDONLY)

    def close_reader(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


class SessionLog:
    """Single-writer append-only log; an exclusive ``flock`` on the log file itself keeps a second writer out.

    The lock is taken on the log's own descriptor rather than a sidecar
    ``.lock`` file, so nothing is left behind in the workspace when the
    session ends (the kernel drops the lock with the descriptor, also when
    the process dies).
    """

    def __init__(self, path: Path, events: Events, torn: TornTail | None, fd: int) -> None:
        self.path = path
        self.events = events
        self.torn = torn
        self._fd = fd
        self._broken: str | None = None
        self._queued: list[tuple[Event, bytes]] = []
        """Deferred events not written yet, in order (group commit)."""

    @classmethod
    def open(cls, path: Path, *, create: bool) -> SessionLog:
        """Open (or create) the log, replaying complete events and repairing a torn tail.

        Raises :class:`HostError` ``HOST-0102`` if another process holds the
        log, ``HOST-0103`` if it does not exist and ``create`` is false,
        ``HOST-0104`` if a complete line in the middle is not a valid event.
        """
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | (os.O_CREAT if create else 0), 0o600)
        except FileNotFoundError as exc:
            raise HostError("HOST-0103", path=str(path)) from exc
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError as exc:
                raise HostError("HOST-0102", path=str(path)) from exc
            events, torn = _replay(path)
            events.open_reader()
        except BaseException:
            os.close(fd)
            raise
        return cls(path, events, torn, fd)

    def append(self, type_: str, data: dict[str, Any], *, durable: bool = False, defer: bool = False) -> Event:
        """Log one event; with ``defer``, queue it for the next :meth:`flush` (see the module docstring).

        Raises :class:`HostError` ``HOST-0105`` when the write fails (nothing of it is left in the file)
        or an earlier one did and could not be cut off again.
        """
        if self._broken is not None:
            raise HostError("HOST-0105", path=str(self.path), reason=self._broken)
        event = Event(seq=len(self.events) + len(self._queued), type=type_, data=data)
        raw = {"data": data, "seq": event.seq, "type": type_, "v": event.v}
        line = canonical_bytes(raw) + b"\n"
        self._queued.append((event, line))
        if defer and not durable:
            return event
        self._write(durable=durable, handed_out=len(self._queued) - 1)
        return event

    def flush(self) -> None:
        """Write every queued event with one ``write``; a no-op when nothing is queued."""
        if self._queued:
            self._write(durable=False, handed_out=len(self._queued))

    def refuse(self, reason: str) -> None:
        """Mark the log broken: every later append and flush raises ``HOST-0105`` with ``reason`` (an earlier
        reason stays). For a caller that no longer knows what the log holds (a start whose append raised)."""
        if self._broken is None:
            self._broken = reason

    def _write(self, *, durable: bool, handed_out: int) -> None:
        """Write the queue with one ``write``; ``handed_out``: how many of its events callers already hold."""
        queued, self._queued = self._queued, []
        if self._broken is not None:
            raise HostError("HOST-0105", path=str(self.path), reason=self._broken)
        start = os.lseek(self._fd, 0, os.SEEK_END)
        try:
            view = memoryview(b"".join(line for _, line in queued))
            while view:  # a short write (disk full, signal) must not leave half an event behind
                view = view[os.write(self._fd, view) :]
            if durable:
                os.fsync(self._fd)
        except OSError as exc:
            if handed_out:
                # Events already handed out as logged are not: no later event may follow them in the file.
                self._broken = f"{exc}: {handed_out} queued events were not written"
            self._undo(start, exc)
        offset = start
        for event, line in queued:
            self.events.add(event, offset, len(line) - 1)
            offset += len(line)

    def _undo(self, start: int, exc: OSError) -> None:
        """Cut a partly written event off again so later appends stay readable; if even that
        fails, refuse every later append rather than write after a torn line."""
        try:
            os.ftruncate(self._fd, start)
        except OSError as again:
            self._broken = f"{exc}; truncate failed: {again}"
        raise HostError("HOST-0105", path=str(self.path), reason=str(exc)) from exc

    def of_type(self, *types: str, nested: bool = True) -> Iterator[Event]:
        """Events of ``types`` in order; ``nested=False`` leaves nested calls' events out (and unread)."""
        return self.events.of_type(*types, nested=nested)

    def close(self) -> None:
        with contextlib.suppress(HostError):  # a queued start is written, or the log was already broken
            self.flush()
        self.events.close_reader()
        if self._fd >= 0:
            os.close(self._fd)  # also releases the lock
            self._fd = -1


def read_events(path: Path) -> list[Event]:
    """The complete events of a log another writer may own, read without touching the file.

    Unlike :meth:`SessionLog.open` it takes no lock and moves nothing aside: a
    last line without its newline, or one that does not parse, is a write in
    progress (or a torn tail the owner will repair) and is left out. Raises
    :class:`HostError` ``HOST-0103`` if there is no log, ``HOST-0104`` for a
    bad line before the last.
    """
    try:
        fh = open(path, "rb")  # noqa: SIM115 - closed by the with below; only the open maps to HOST-0103
    except FileNotFoundError as exc:
        raise HostError("HOST-0103", path=str(path)) from exc
    events: list[Event] = []
    bad: int | None = None
    with fh:
        for line in fh:  # one line at a time: a large log is never read whole
            if not line.endswith(b"\n"):
                break  # never finished
            if bad is not None:
                raise HostError("HOST-0104", path=str(path), seq=bad)
            parsed = _parse(line[:-1])
            if parsed is None:
                bad = len(events)  # fine if it is the last complete line
                continue
            events.append(parsed)
    return events


def open_elsewhere(path: Path) -> bool:
    """Whether a writer (another host, in this process or another) holds the log's lock right now.

    Raises :class:`HostError` ``HOST-0103`` if there is no log.
    """
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError as exc:
        raise HostError("HOST-0103", path=str(path)) from exc
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # also drops the probe's own shared lock
    return False


def _replay(path: Path) -> tuple[Events, TornTail | None]:
    events = Events(path)
    offset = 0
    torn_at: int | None = None
    with open(path, "rb") as fh:
        for line in fh:  # one line at a time: a large log is never read whole
            if not line.endswith(b"\n"):
                # An append writes line and newline at once: a last line without its newline never
                # finished, even when its bytes happen to parse.
                torn_at = offset
                break
            parsed = _parse(line[:-1])
            if parsed is None:
                if _blank_rest(fh):
                    torn_at = offset
                    break
                raise HostError("HOST-0104", path=str(path), seq=len(events))
            events.add(parsed, offset, len(line) - 1)
            offset += len(line)
    torn = _move_aside(path, offset) if torn_at is not None else None
    return events, torn


def _blank_rest(fh: Any) -> bool:
    """Whether nothing but whitespace follows in ``fh`` (read in chunks)."""
    while chunk := fh.read(_CHUNK):
        if chunk.strip():
            return False
    return True


def _parse(line: bytes) -> Event | None:
    try:
        raw = orjson.loads(line)
        event = Event(seq=int(raw["seq"]), type=str(raw["type"]), data=dict(raw["data"]), v=int(raw["v"]))
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
        return None
    return event if event.v in _KNOWN_VERSIONS else None


def _move_aside(path: Path, offset: int) -> TornTail:
    aside = path.with_name(f"{path.name}.torn-{offset}")
    n = 1
    while aside.exists():  # an earlier crash at the same offset: keep its bytes too
        n += 1
        aside = path.with_name(f"{path.name}.torn-{offset}-{n}")
    size = 0
    with open(path, "r+b") as fh, open(aside, "wb") as out:
        fh.seek(offset)
        while chunk := fh.read(_CHUNK):
            out.write(chunk)
            size += len(chunk)
        fh.truncate(offset)
        fh.flush()
        os.fsync(fh.fileno())
    return TornTail(offset=offset, size=size, moved_to=aside)
