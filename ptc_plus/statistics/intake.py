"""The store's intake: samples waiting for the writers' lock, each in its own file beside the store (ADR 0091).

A writer that finds the writers' lock busy does not wait for its turn to
rewrite the store: it writes its sample to an *intake file*
(``statistics.json.pending-<ns>-<8 hex>``), which needs no lock, and the next
writer holding the lock folds every intake file into the store in one rewrite
(a group commit), then removes them. So a sample is never lost because a lock
was slow or unfair: once its intake file exists it counts (readers apply the
intake to what they read) and is folded by whichever writer comes next.

- An intake file appears whole or not at all: it is written under a private
  name (``.statistics.json.pending-<ns>-<8 hex>.part``), flushed, and renamed.
  While it is written its writer holds an ``flock`` on it, so the sweep
  (which runs under the writers' lock) removes only parts whose writer died:
  the lock dies with the process, also by ``SIGKILL``.
- Names sort in the order the samples were recorded (nanoseconds since the
  epoch, then a random tie-break): a family recorded twice is folded in that
  order, so its later sample wins.
- Format (version 1), through the one strict converter (ADR 0058)::

      {"version": 2, "key": "<16 hex>", "plan_config_revision": "sha256:...", "day": "2026-12-01",
       "evidence": [{"identity": ..., "revision": ..., "schema_revision": ...,
                     "disclosure": "full", "used": true, "shape": null, "results": 0}, ...]}

  Only the family's digest, identities, revisions and evidence bits: no user
  content, as in the store itself.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import secrets
import stat
import time
from typing import Any

import attrs
import cattrs
import orjson

from hookspecs.serialization import canonical_bytes, structure
from ptc_plus.statistics.codec import family_key
from ptc_plus.statistics.sample import Evidence, FamilySample
from ptc_plus.statistics.upsert import today

VERSION = 2
READS = frozenset({1, 2})
"""Version 2 adds ``day`` and the evidence's learned shapes (ADR 0102); a version-1 file has neither."""
MAX_PENDING = 256
"""Intake files a store may hold. Writers fold them at once, so only a slow holder of the lock or one stopped
while holding it (``SIGSTOP``, a hung disk) lets them pile up; a writer finding this many waits for the lock or
for room like any other, and is refused loudly (PTC-5004) only once its wait ran out (ADR 0091)."""
MAX_PENDING_BYTES = 16 << 20
"""An intake file larger than this is not read (not ours): a sample of 10,000 capabilities is about 1.5 MB."""

_FLAGS = os.O_NOFOLLOW | os.O_CLOEXEC


@attrs.frozen(kw_only=True)
class PendingSample:
    """A family's sample waiting in the intake (see the module docstring for the file format)."""

    version: int
    key: str
    plan_config_revision: str
    evidence: tuple[Evidence, ...]
    day: str = ""
    """The UTC day it was recorded (a shape first learned from it is learned since then); ``""`` in version 1."""

    @classmethod
    def of(cls, sample: FamilySample) -> PendingSample:
        return cls(
            version=VERSION,
            key=family_key(sample.family_id),
            plan_config_revision=sample.plan_config_revision,
            evidence=sample.evidence,
            day=today(),
        )


class PendingDamaged(ValueError):
    """An intake file that is not one (written by no writer of ours: a crash leaves no partial one); ``raw``:
    its bytes, when they could be read (to keep a copy aside)."""

    def __init__(self, detail: str, raw: bytes | None = None) -> None:
        super().__init__(detail)
        self.raw = raw


def pending_pattern(store_name: str) -> re.Pattern[str]:
    return re.compile(rf"{re.escape(store_name)}\.pending-[0-9]{{20}}-[0-9a-f]{{8}}")


def part_pattern(store_name: str) -> re.Pattern[str]:
    return re.compile(rf"\.{re.escape(store_name)}\.pending-[0-9]{{20}}-[0-9a-f]{{8}}\.part")


def pending_names(directory: int, store_name: str) -> list[str]:
    """The intake files in ``directory``, oldest first."""
    pattern = pending_pattern(store_name)
    return sorted(name for name in os.listdir(directory) if pattern.fullmatch(name))


def write_pending(directory: int, store_name: str, sample: FamilySample) -> str:
    """Put ``sample`` in the intake of the store ``store_name`` in ``directory``; return the file's name.

    :raises OSError: it could not be written (a full disk, a read-only file system, permissions); nothing is
        left behind.
    """
    data = canonical_bytes(PendingSample.of(sample))
    while True:
        name = f"{store_name}.pending-{time.time_ns():020d}-{secrets.token_hex(4)}"
        part = f".{name}.part"
        try:
            fd = os.open(part, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _FLAGS, 0o666, dir_fd=directory)
        except FileExistsError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)  # "a live writer": the sweep leaves this part alone
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
            os.rename(part, name, src_dir_fd=directory, dst_dir_fd=directory)
            return name
        except FileNotFoundError:
            # The sweep took the part between our create and our flock (it looked like a dead writer's):
            # nothing of ours was published; write it again under a new name.
            continue
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(part, dir_fd=directory)
            raise
        finally:
            os.close(fd)


def read_pending(directory: int, name: str) -> bytes | None:
    """The bytes of the intake file ``name`` (``None`` when it was folded and removed meanwhile).

    :raises PendingDamaged: not a regular file, or too large.
    """
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | _FLAGS, dir_fd=directory)
    except FileNotFoundError:
        return None
    except OSError as exc:  # a symlink (ELOOP) or worse at an intake name: not ours
        raise PendingDamaged(f"intake file {name}: {exc.strerror or exc}") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise PendingDamaged(f"intake file {name}: not a regular file")
        chunks = []
        total = 0
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
            total += len(chunk)
            if total > MAX_PENDING_BYTES:
                raise PendingDamaged(f"intake file {name}: larger than {MAX_PENDING_BYTES} bytes")
        return b"".join(chunks)
    finally:
        os.close(fd)


def decode_pending(name: str, raw: bytes) -> PendingSample:
    """:raises PendingDamaged: not JSON, not the format, or a version we do not know."""
    try:
        data: Any = orjson.loads(raw)
        if not isinstance(data, dict) or data.get("version") not in READS:
            raise PendingDamaged(f"intake file {name}: not of version {VERSION}", raw)
        return structure(data, PendingSample)
    except (orjson.JSONDecodeError, cattrs.BaseValidationError, ValueError, TypeError) as exc:
        if isinstance(exc, PendingDamaged):
            raise
        raise PendingDamaged(f"intake file {name}: not the format ({type(exc).__name__})", raw) from None


def sweep_parts(directory: int, store_name: str) -> None:
    """Remove parts of intake files whose writer died before publishing them (their ``flock`` is free)."""
    pattern = part_pattern(store_name)
    for name in os.listdir(directory):
        if not pattern.fullmatch(name):
            continue
        try:
            fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | _FLAGS, dir_fd=directory)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            continue  # its writer is alive and writing
        else:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(name, dir_fd=directory)
        finally:
            os.close(fd)


__all__ = [
    "MAX_PENDING",
    "VERSION",
    "PendingDamaged",
    "PendingSample",
    "decode_pending",
    "pending_names",
    "read_pending",
    "sweep_parts",
    "write_pending",
]
