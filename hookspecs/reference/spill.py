"""The reference host's spill store: large text kept on disk, read back by handle (ADR 0069).

Files are content-addressed (``spill-<digest>.txt``) under one directory and
written atomically, so a put is idempotent and a reader never sees half a
file. The store is bounded in total bytes: a put that takes it over the bound
evicts the least recently used files (put or read), those no session pins
first. Sessions pin the handles their surface shows (``pins/``, one small file
per session, rewritten as the surface changes); when the host shuts down it
sweeps what it wrote and no session pins, so a session's spills go with the
results that needed them, while a resumed session still reads every handle
it shows.

Reads are of character ranges of UTF-8 files, so each spill has an index
beside it (``spill-<digest>.idx``, JSON, versioned): the byte offset of every
:data:`INDEX_STRIDE`-th character. A read seeks to the block its range starts
in and decodes only what it returns (a 32 KB read of a 60 MB spill decoded
all 60 MB before, ADR 0087). A spill without a usable index (written before
indexes, or damaged) gets one on its first read, built by streaming the file.
"""

from __future__ import annotations

import codecs
import contextlib
import errno
import hashlib
import os
import re
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import BinaryIO

import orjson

DEFAULT_MAX_BYTES = 256 * 1024 * 1024
"""The default bound of one store's spill files, in bytes."""

PINS_VERSION = 1
INDEX_VERSION = 1
INDEX_STRIDE = 16 * 1024
"""Characters between two offsets of a spill's index."""
_CHUNK = 1 << 20

_HANDLE = re.compile(r"spill-[0-9a-f]{32}")


class FileSpillStore:
    """Content-addressed text files under ``root``, at most ``max_bytes`` in total.

    Implements :class:`hookspecs.services.SpillStore`; :meth:`pin` and
    :meth:`sweep` are the host's own (sessions and shutdown call them).
    """

    def __init__(self, root: Path, *, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self.root = root
        self.max_bytes = max_bytes
        self._written: set[str] = set()
        """Handles this store put: only these are swept, never another process's fresh spills."""

    def put(self, text: str) -> str:
        data = text.encode("utf-8")
        if len(data) > self.max_bytes:
            # Keeping part of it would lose the rest: refuse, and the caller keeps its original.
            raise OSError(errno.EFBIG, f"{len(data)} bytes exceed the spill store bound of {self.max_bytes} bytes")
        handle = "spill-" + hashlib.sha256(data).hexdigest()[:32]
        target = self._path(handle)
        if target.exists():
            os.utime(target)
        else:
            self.root.mkdir(parents=True, exist_ok=True)
            # The index first: a reader finding the text finds its index too (or builds one).
            self._write(self._index_path(handle), _index_bytes(_offsets(text), len(text), len(data)))
            self._write(target, data)
            self._evict(keep=handle)
        self._written.add(handle)
        return handle

    def read(self, handle: str, offset: int = 0, limit: int | None = None) -> str:
        """Characters ``offset`` to ``offset + limit`` of the spill (to its end when ``limit`` is ``None``).

        Decodes only from the start of the index block ``offset`` falls in to the end of the range.
        """
        if not _HANDLE.fullmatch(handle):
            raise KeyError(handle)
        path = self._path(handle)
        offset = max(0, offset)
        try:
            with open(path, "rb") as fh:
                chars, offsets = self._index(handle, fh)
                if offset >= chars or (limit is not None and limit <= 0):
                    text = ""
                else:
                    block = offset // INDEX_STRIDE
                    fh.seek(offsets[block])
                    text = _decode(fh, offset - block * INDEX_STRIDE, limit)
        except FileNotFoundError as exc:
            raise KeyError(handle) from exc
        except UnicodeDecodeError as exc:  # not written by put: unreadable, like a damaged disk
            raise OSError(errno.EIO, f"{path.name} is not UTF-8: {exc}") from exc
        with contextlib.suppress(OSError):
            os.utime(path)  # recently read: evicted last
        return text

    # -- the host's side ------------------------------------------------------------------
    def pin(self, session_id: str, handles: Iterable[str]) -> None:
        """Record the handles ``session_id``'s surface shows now (replacing what it pinned before)."""
        path = self._pins_path(session_id)
        wanted = sorted(set(handles))
        if not wanted:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        payload = orjson.dumps({"version": PINS_VERSION, "session_id": session_id, "handles": wanted})
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".pins-")
        with os.fdopen(fd, "wb") as fh:
            fh.write(payload)
        os.replace(tmp, path)

    def pinned(self) -> set[str]:
        """Every handle some session pins. Raises ``OSError``/``ValueError`` for a pins file it cannot read."""
        found: set[str] = set()
        pins = self.root / "pins"
        if not pins.is_dir():
            return found
        for path in pins.glob("*.json"):
            data = orjson.loads(path.read_bytes())
            if not isinstance(data, dict) or data.get("version") != PINS_VERSION:
                raise ValueError(f"{path}: not a pins file of version {PINS_VERSION}")
            found.update(str(h) for h in data.get("handles", ()))
        return found

    def sweep(self) -> list[str]:
        """Delete what this store wrote that no session pins; returns the handles deleted.

        An unreadable pins file stops the sweep (nothing deleted): a session might pin anything.
        """
        try:
            keep = self.pinned()
        except (OSError, ValueError):
            return []
        gone = sorted(self._written - keep)
        for handle in gone:
            self._remove(handle)
        self._written -= set(gone)
        return gone

    def size(self) -> int:
        """Bytes of spill files kept now."""
        return sum(size for _, _, size in self._files())

    # -- internals ------------------------------------------------------------------------------
    def _path(self, handle: str) -> Path:
        return self.root / f"{handle}.txt"

    def _index_path(self, handle: str) -> Path:
        return self.root / f"{handle}.idx"

    def _remove(self, handle: str) -> None:
        for path in (self._path(handle), self._index_path(handle)):
            with contextlib.suppress(FileNotFoundError):
                path.unlink()

    def _write(self, target: Path, data: bytes) -> None:
        """Write ``target`` atomically (a reader sees the old file, or none, or the whole new one)."""
        fd, tmp = tempfile.mkstemp(dir=self.root, prefix=".spill-")
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.replace(tmp, target)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise

    def _index(self, handle: str, fh: BinaryIO) -> tuple[int, list[int]]:
        """``(characters, offsets)`` of the open spill ``fh``: read from its index, or built and kept."""
        size = os.fstat(fh.fileno()).st_size
        with contextlib.suppress(OSError, ValueError, TypeError, KeyError, orjson.JSONDecodeError):
            raw = orjson.loads(self._index_path(handle).read_bytes())
            chars, offsets = int(raw["chars"]), [int(o) for o in raw["offsets"]]
            if (
                raw["version"] == INDEX_VERSION
                and raw["stride"] == INDEX_STRIDE
                and raw["bytes"] == size
                and len(offsets) == max(1, -(-chars // INDEX_STRIDE))
            ):
                return chars, offsets
        chars, offsets = _scan(fh)  # written before indexes (or the index is damaged): build it once
        with contextlib.suppress(OSError):  # a read-only store still reads, only more slowly
            self._write(self._index_path(handle), _index_bytes(offsets, chars, size))
        return chars, offsets

    def _pins_path(self, session_id: str) -> Path:
        # Session ids come from callers: hash them rather than trust them as file names.
        return self.root / "pins" / (hashlib.sha256(session_id.encode("utf-8")).hexdigest()[:32] + ".json")

    def _files(self) -> list[tuple[str, float, int]]:
        files = []
        for path in self.root.glob("spill-*.txt"):
            with contextlib.suppress(FileNotFoundError):
                stat = path.stat()
                files.append((path.stem, stat.st_mtime, stat.st_size))
        return files

    def _evict(self, keep: str) -> None:
        files = self._files()
        total = sum(size for _, _, size in files)
        if total <= self.max_bytes:
            return
        try:
            pinned = self.pinned()
        except (OSError, ValueError):
            pinned = {handle for handle, _, _ in files}  # unknown pins: treat all as pinned, still bounded
        for handle, _, size in sorted(files, key=lambda f: (f[0] in pinned, f[1])):
            if total <= self.max_bytes:
                break
            if handle == keep:
                continue
            self._remove(handle)
            self._written.discard(handle)
            total -= size


def _offsets(text: str) -> list[int]:
    """Byte offsets in ``text``'s UTF-8 of characters 0, stride, 2 × stride, ... (at least one)."""
    offsets, at = [], 0
    for start in range(0, max(1, len(text)), INDEX_STRIDE):
        offsets.append(at)
        at += len(text[start : start + INDEX_STRIDE].encode("utf-8"))
    return offsets


def _index_bytes(offsets: list[int], chars: int, size: int) -> bytes:
    return orjson.dumps(
        {"version": INDEX_VERSION, "stride": INDEX_STRIDE, "chars": chars, "bytes": size, "offsets": offsets}
    )


def _scan(fh: BinaryIO) -> tuple[int, list[int]]:
    """``(characters, offsets)`` of a spill read from its start in chunks (never held whole)."""
    fh.seek(0)
    decoder = codecs.getincrementaldecoder("utf-8")()
    offsets: list[int] = []
    chars = consumed = 0
    """Characters decoded so far, and the bytes they took."""
    while True:
        chunk = fh.read(_CHUNK)
        text = decoder.decode(chunk, final=not chunk)
        start = 0
        # Block starts inside this piece, relative to it; each segment between them is encoded once.
        for at in range(-(-chars // INDEX_STRIDE) * INDEX_STRIDE - chars, len(text), INDEX_STRIDE):
            consumed += len(text[start:at].encode("utf-8"))
            offsets.append(consumed)
            start = at
        consumed += len(text[start:].encode("utf-8"))
        chars += len(text)
        if not chunk:
            return chars, offsets or [0]


def _decode(fh: BinaryIO, skip: int, limit: int | None) -> str:
    """Decode from ``fh``'s position: drop ``skip`` characters, return the next ``limit`` (``None``: all)."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    parts: list[str] = []
    have = 0
    want = None if limit is None else skip + limit
    while want is None or have < want:
        chunk = fh.read(_CHUNK if want is None else max(4096, 4 * (want - have)))
        text = decoder.decode(chunk, final=not chunk)
        parts.append(text)
        have += len(text)
        if not chunk:
            break
    joined = "".join(parts)
    return joined[skip:] if limit is None else joined[skip : skip + limit]
