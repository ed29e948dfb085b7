"""A small on-disk cache of derived catalog data (index, SDK text, embeddings), shared by sessions.

Contract (ADR 0078):

- :meth:`DiskCache.load` ``(kind, key)`` returns the bytes an earlier :meth:`DiskCache.store` of the same
  ``(kind, key)`` wrote, or ``None``. It never raises: a missing, truncated, damaged, foreign (another
  format version, another kind or key in the header) or unreadable entry is a miss, and the caller
  rebuilds and stores again (which replaces the bad entry).
- :meth:`DiskCache.store` never raises either (a cache that cannot be written is only slower). It writes
  a temporary file in the entry's directory, ``fsync``\\ s it and renames it over the entry, so a reader —
  in this process or another — sees the old entry, the new one or none, never a torn one. Concurrent
  writers of one key each rename a complete file; the last one wins, and both wrote the same bytes when
  the key is a digest of everything the payload depends on.
- The key is the caller's digest of everything the payload is a function of; :func:`cache_key` adds
  :func:`code_version` (the package version, a digest of the sources and data that derive cached
  values, the Python and Unicode versions), so a changed ranker or renderer never reads an old entry.
- Size is bounded: after a store, entries beyond ``max_bytes`` or ``max_entries`` are evicted, least
  recently used first (a hit refreshes the entry's modification time). Eviction runs under a
  :class:`filelock.FileLock` of the cache directory so two sessions do not race over the listing;
  temporary files a killed writer left behind are removed by it too.

Where: ``$PTC_PLUS_CACHE_DIR`` if set, else ``$XDG_CACHE_HOME/ptc-plus`` (an absolute one), else
``~/.cache/ptc-plus``. ``PTC_PLUS_CACHE=off`` (or ``0``, ``no``, ``false``) disables it:
:func:`default_cache` is then ``None`` and callers build everything.

Entry layout (``<dir>/<kind>/<key>.bin``): :data:`MAGIC`, the format version (2 bytes, big-endian),
the lengths of kind, key and payload, the SHA-256 of the payload, then kind, key and payload.
"""

from __future__ import annotations

import contextlib
import enum
import functools
import hashlib
import os
import struct
import sys
import tempfile
import time
import unicodedata
from collections.abc import Iterable, Mapping
from pathlib import Path

import attrs
import filelock

from ptc_plus import __version__

MAGIC = b"PTCCACHE"
FORMAT_VERSION = 1
CACHE_DIR_ENV = "PTC_PLUS_CACHE_DIR"
CACHE_SWITCH_ENV = "PTC_PLUS_CACHE"
APP_DIR = "ptc-plus"
DEFAULT_MAX_BYTES = 512 * 1024 * 1024
DEFAULT_MAX_ENTRIES = 256
_HEADER = struct.Struct(">8sHHHQ32s")
_SUFFIX = ".bin"
_TEMPORARY = ".tmp-"
_STALE_TEMPORARY_S = 3600.0
_LOCK_TIMEOUT_S = 2.0
_OFF = frozenset({"0", "off", "no", "false"})
_DERIVING = ("capabilities", "discovery", "sdk")
"""Subpackages of ``ptc_plus`` whose sources and data derive cached values (their digest is in every key)."""


@attrs.frozen(kw_only=True)
class DiskCache:
    """Entries under :attr:`directory`, at most :attr:`max_bytes` and :attr:`max_entries` in all."""

    directory: Path
    max_bytes: int = DEFAULT_MAX_BYTES
    max_entries: int = DEFAULT_MAX_ENTRIES

    def key(self, parts: Iterable[bytes]) -> str:
        """:func:`cache_key` (so code below ``capabilities`` can key entries through the object)."""
        return cache_key(parts)

    def path(self, kind: str, key: str) -> Path:
        _check_name("kind", kind)
        _check_name("key", key)
        return self.directory / kind / (key + _SUFFIX)

    def load(self, kind: str, key: str) -> bytes | None:
        """The payload stored under ``(kind, key)``, or ``None`` (never raises)."""
        try:
            path = self.path(kind, key)
            data = path.read_bytes()
        except (OSError, ValueError):
            return None
        payload = _unpack(data, kind, key)
        if payload is not None:
            with contextlib.suppress(OSError):  # least recently *used*: a hit keeps the entry young
                os.utime(path)
        return payload

    def store(self, kind: str, key: str, payload: bytes) -> bool:
        """Write ``payload`` under ``(kind, key)`` atomically; ``False`` if it could not (never raises)."""
        try:
            path = self.path(kind, key)
            path.parent.mkdir(parents=True, exist_ok=True)
            data = _pack(kind, key, payload)
            handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=_TEMPORARY, suffix=_SUFFIX)
            try:
                with os.fdopen(handle, "wb") as file:
                    file.write(data)
                    file.flush()
                    os.fsync(file.fileno())
                os.replace(temporary, path)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(temporary)
                raise
        except (OSError, ValueError):
            return False
        self.evict()
        return True

    def evict(self) -> None:
        """Drop least recently used entries beyond the bounds, and stale temporary files (never raises)."""
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            with filelock.FileLock(str(self.directory / ".lock"), timeout=_LOCK_TIMEOUT_S):
                self._evict()
        except (OSError, filelock.Timeout):
            return

    def _evict(self) -> None:
        now = time.time()
        entries: list[tuple[float, int, Path]] = []
        for kind in self.directory.iterdir():
            if not kind.is_dir() or kind.is_symlink():
                continue
            for path in kind.iterdir():
                try:
                    stat = path.stat(follow_symlinks=False)
                except OSError:
                    continue
                if path.name.startswith(_TEMPORARY):
                    if now - stat.st_mtime > _STALE_TEMPORARY_S:
                        with contextlib.suppress(OSError):
                            path.unlink()
                elif path.name.endswith(_SUFFIX):
                    entries.append((stat.st_mtime, stat.st_size, path))
        entries.sort(key=lambda e: (-e[0], str(e[2])))
        total = 0
        for count, (_, size, path) in enumerate(entries, 1):
            total += size
            if count > self.max_entries or total > self.max_bytes:
                with contextlib.suppress(OSError):
                    path.unlink()


def _check_name(what: str, name: str) -> None:
    if not name or len(name) > 128 or not all(c.isascii() and (c.isalnum() or c in "-_.") for c in name):
        raise ValueError(f"cache {what} must be 1-128 ASCII letters, digits, '-', '_' or '.': {name!r}")
    if name.startswith("."):
        raise ValueError(f"cache {what} must not start with '.': {name!r}")


def _pack(kind: str, key: str, payload: bytes) -> bytes:
    kind_bytes, key_bytes = kind.encode("ascii"), key.encode("ascii")
    digest = hashlib.sha256(payload).digest()
    header = _HEADER.pack(MAGIC, FORMAT_VERSION, len(kind_bytes), len(key_bytes), len(payload), digest)
    return header + kind_bytes + key_bytes + payload


def _unpack(data: bytes, kind: str, key: str) -> bytes | None:
    if len(data) < _HEADER.size:
        return None
    magic, version, kind_length, key_length, length, digest = _HEADER.unpack_from(data)
    if magic != MAGIC or version != FORMAT_VERSION:
        return None
    start = _HEADER.size
    named = data[start : start + kind_length + key_length]
    if named != kind.encode("ascii") + key.encode("ascii") or kind_length != len(kind):
        return None
    payload = data[start + kind_length + key_length :]
    if len(payload) != length or hashlib.sha256(payload).digest() != digest:
        return None
    return payload


def cache_directory(env: Mapping[str, str] | None = None) -> Path | None:
    """Where the cache lives, or ``None`` when ``PTC_PLUS_CACHE`` turns it off (see the module docstring)."""
    env = os.environ if env is None else env
    if env.get(CACHE_SWITCH_ENV, "").strip().lower() in _OFF:
        return None
    chosen = env.get(CACHE_DIR_ENV, "")
    if chosen:
        return Path(chosen)
    xdg = env.get("XDG_CACHE_HOME", "")
    if xdg and Path(xdg).is_absolute():  # a relative one is ignored, as the XDG specification requires
        return Path(xdg) / APP_DIR
    home = env.get("HOME") or str(Path.home())
    return Path(home) / ".cache" / APP_DIR


def default_cache(env: Mapping[str, str] | None = None) -> DiskCache | None:
    """The user's cache (:func:`cache_directory`), or ``None`` when it is turned off."""
    directory = cache_directory(env)
    return None if directory is None else DiskCache(directory=directory)


class UserCache(enum.Enum):
    """A default argument meaning "the cache :func:`default_cache` names" (the environment decides)."""

    DEFAULT = "default"


def chosen_cache(cache: DiskCache | UserCache | None) -> DiskCache | None:
    """``cache`` itself, or :func:`default_cache` for :attr:`UserCache.DEFAULT`."""
    return default_cache() if cache is UserCache.DEFAULT else cache


@functools.cache
def code_version() -> str:
    """A digest of what derives cached values: package, sources and data of ``capabilities``, ``discovery`` and ``sdk``,
    Python and Unicode versions. Any edit of a ranker or renderer file changes it (read once per process)."""
    digest = hashlib.sha256()
    for part in (__version__, sys.version, unicodedata.unidata_version, str(FORMAT_VERSION)):
        digest.update(part.encode() + b"\0")
    root = Path(__file__).resolve().parent.parent
    for package in _DERIVING:
        for path in sorted((root / package).glob("*")):
            if path.suffix in (".py", ".json") and path.is_file():
                digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def cache_key(parts: Iterable[bytes]) -> str:
    """A key for :meth:`DiskCache.load`/``store``: SHA-256 over :func:`code_version` and ``parts`` (each
    length-prefixed, so ``[b"ab", b"c"]`` and ``[b"a", b"bc"]`` differ)."""
    digest = hashlib.sha256(code_version().encode())
    for part in parts:
        digest.update(struct.pack(">Q", len(part)))
        digest.update(part)
    return digest.hexdigest()
