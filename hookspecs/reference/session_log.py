"""Append-only JSONL event log of one session.

Each line is one event ``{"v": 1, "seq": n, "type": ..., "data": {...}}``.
Every append is written with one ``write`` on an ``O_APPEND`` descriptor, so
a crash leaves at most one torn line at the end; :meth:`SessionLog.open`
detects it, moves the torn bytes aside to ``<log>.torn-<offset>`` (nothing
is deleted) and reports it, keeping every complete event before it.
Durability: a line is in the OS on return (survives the process); events
marked ``durable`` are also ``fsync``-ed (survive the machine).
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import orjson

from hookspecs.i18n import message
from hookspecs.reference.errors import HostError
from hookspecs.serialization import canonical_bytes

LOG_VERSION = 1


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


class SessionLog:
    """Single-writer append-only log; an exclusive ``flock`` on the log file itself keeps a second writer out.

    The lock is taken on the log's own descriptor rather than a sidecar
    ``.lock`` file, so nothing is left behind in the workspace when the
    session ends (the kernel drops the lock with the descriptor, also when
    the process dies).
    """

    def __init__(self, path: Path, events: list[Event], torn: TornTail | None, fd: int) -> None:
        self.path = path
        self.events = events
        self.torn = torn
        self._fd = fd
        self._broken: str | None = None

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
        except BaseException:
            os.close(fd)
            raise
        return cls(path, events, torn, fd)

    def append(self, type_: str, data: dict[str, Any], *, durable: bool = False) -> Event:
        event = Event(seq=len(self.events), type=type_, data=data)
        raw = {"data": data, "seq": event.seq, "type": type_, "v": event.v}
        line = canonical_bytes(raw) + b"\n"
        if self._broken is not None:
            raise HostError("HOST-0105", path=str(self.path), reason=self._broken)
        start = os.lseek(self._fd, 0, os.SEEK_END)
        try:
            view = memoryview(line)
            while view:  # a short write (disk full, signal) must not leave half an event behind
                view = view[os.write(self._fd, view) :]
            if durable:
                os.fsync(self._fd)
        except OSError as exc:
            self._undo(start, exc)
        self.events.append(event)
        return event

    def _undo(self, start: int, exc: OSError) -> None:
        """Cut a partly written event off again so later appends stay readable; if even that
        fails, refuse every later append rather than write after a torn line."""
        try:
            os.ftruncate(self._fd, start)
        except OSError as again:
            self._broken = f"{exc}; truncate failed: {again}"
        raise HostError("HOST-0105", path=str(self.path), reason=str(exc)) from exc

    def of_type(self, *types: str) -> Iterator[Event]:
        return (e for e in self.events if e.type in types)

    def close(self) -> None:
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
        blob = path.read_bytes()
    except FileNotFoundError as exc:
        raise HostError("HOST-0103", path=str(path)) from exc
    lines = blob.split(b"\n")[:-1]  # the part after the last newline never finished
    events: list[Event] = []
    for number, line in enumerate(lines):
        parsed = _parse(line)
        if parsed is None:
            if number == len(lines) - 1:
                break
            raise HostError("HOST-0104", path=str(path), seq=len(events))
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


def _replay(path: Path) -> tuple[list[Event], TornTail | None]:
    blob = path.read_bytes()
    events: list[Event] = []
    offset = 0
    torn: TornTail | None = None
    while offset < len(blob):
        end = blob.find(b"\n", offset)
        if end < 0:
            # An append writes line and newline at once: a last line without its newline never
            # finished, even when its bytes happen to parse (and offset would wrap to 0 below).
            torn = _move_aside(path, blob, offset)
            break
        parsed = _parse(blob[offset:end])
        if parsed is None:
            if blob[end + 1 :].strip() == b"":
                torn = _move_aside(path, blob, offset)
                break
            raise HostError("HOST-0104", path=str(path), seq=len(events))
        events.append(parsed)
        offset = end + 1
    return events, torn


def _parse(line: bytes) -> Event | None:
    try:
        raw = orjson.loads(line)
        return Event(seq=int(raw["seq"]), type=str(raw["type"]), data=dict(raw["data"]), v=int(raw["v"]))
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
        return None


def _move_aside(path: Path, blob: bytes, offset: int) -> TornTail:
    aside = path.with_name(f"{path.name}.torn-{offset}")
    n = 1
    while aside.exists():  # an earlier crash at the same offset: keep its bytes too
        n += 1
        aside = path.with_name(f"{path.name}.torn-{offset}-{n}")
    aside.write_bytes(blob[offset:])
    with open(path, "r+b") as fh:
        fh.truncate(offset)
        fh.flush()
        os.fsync(fh.fileno())
    return TornTail(offset=offset, size=len(blob) - offset, moved_to=aside)
