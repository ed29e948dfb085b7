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
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import re
import tempfile
from collections.abc import Iterable
from pathlib import Path

import orjson

DEFAULT_MAX_BYTES = 256 * 1024 * 1024
"""The default bound of one store's spill files, in bytes."""

PINS_VERSION = 1

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
            fd, tmp = tempfile.mkstemp(dir=self.root, prefix=".spill-")
            try:
                with os.fdopen(fd, "wb") as fh:
                    fh.write(data)
                os.replace(tmp, target)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                raise
            self._evict(keep=handle)
        self._written.add(handle)
        return handle

    def read(self, handle: str, offset: int = 0, limit: int | None = None) -> str:
        if not _HANDLE.fullmatch(handle):
            raise KeyError(handle)
        path = self._path(handle)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError as exc:
            raise KeyError(handle) from exc
        with contextlib.suppress(OSError):
            os.utime(path)  # recently read: evicted last
        offset = max(0, offset)
        return text[offset:] if limit is None else text[offset : offset + max(0, limit)]

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
            with contextlib.suppress(FileNotFoundError):
                self._path(handle).unlink()
        self._written -= set(gone)
        return gone

    def size(self) -> int:
        """Bytes of spill files kept now."""
        return sum(size for _, _, size in self._files())

    # -- internals ------------------------------------------------------------------------------
    def _path(self, handle: str) -> Path:
        return self.root / f"{handle}.txt"

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
            with contextlib.suppress(FileNotFoundError):
                self._path(handle).unlink()
            self._written.discard(handle)
            total -= size
