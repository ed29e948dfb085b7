"""Scratch state directories of short-lived hosts, and the sweep of those whose owner died (ADR 0088).

``ptc-plus exec``, ``ptc-plus mcp-serve`` (and its ``--check``) and the llm
plugin outside a conversation keep a session's logs, spilled text and the
program's code and results in a temporary directory removed at exit. A
process killed with ``SIGKILL`` (or by the OOM killer) never removes it, so
:func:`scratch_state_dir` first sweeps the stale ones of this user.

A directory is swept only when it is provably one of ours and its owner is
gone: its name has one of :data:`PREFIXES`; it is a real directory (not a
symlink) directly in the temporary directory, owned by this user and closed
to others; it holds a regular :data:`OWNER_LOCK` file whose marker the owner
wrote *after* taking an ``flock`` on it; and that lock can be taken now. The
kernel releases an ``flock`` when the last descriptor of its owner closes,
however the owner died, so a live owner's directory is never swept. Every
step opens relative to a descriptor without following symlinks, and the
removal (``shutil.rmtree`` with ``dir_fd``) never follows one either, so a
symlink planted in a shared ``/tmp`` leads nowhere.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import logging
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

import orjson

PREFIXES = ("ptc-exec-", "ptc-mcp-serve-", "ptc-mcp-check-", "ptc-llm-")
"""Name prefixes of the scratch directories :func:`scratch_state_dir` makes (and the sweep considers)."""

OWNER_LOCK = ".ptc-plus-owner.lock"
"""Held (``flock``) by the directory's owner for its lifetime; holds ``{"version": 1, "pid": <owner>}``."""

MARKER_VERSION = 1

_log = logging.getLogger(__name__)
_DIRECTORY_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


@contextlib.contextmanager
def scratch_state_dir(prefix: str, root: Path | None = None) -> Iterator[Path]:
    """A fresh private directory named ``<prefix>…`` in ``root`` (default: the system's), removed on exit.

    Stale scratch directories in ``root`` are swept first (:func:`sweep_stale`).
    ``prefix`` is one of :data:`PREFIXES`.

    :raises ValueError: ``prefix`` is not one of :data:`PREFIXES`.
    """
    if prefix not in PREFIXES:
        raise ValueError(f"unknown scratch directory prefix {prefix!r}")
    where = Path(root if root is not None else tempfile.gettempdir())
    sweep_stale(where)
    path = Path(tempfile.mkdtemp(prefix=prefix, dir=where))
    lock = os.open(path / OWNER_LOCK, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        # The marker comes only after the lock is held: a sweeper that reads a marker finds the lock taken.
        os.write(lock, orjson.dumps({"version": MARKER_VERSION, "pid": os.getpid()}))
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)
        os.close(lock)


def sweep_stale(root: Path) -> tuple[str, ...]:
    """Remove the scratch directories in ``root`` whose owner is gone; their names.

    Never raises for what it finds: a directory it cannot prove stale is left alone.
    """
    try:
        root_fd = os.open(root, _DIRECTORY_FLAGS)
    except OSError:
        return ()
    swept: list[str] = []
    try:
        info = os.fstat(root_fd)
        if info.st_mode & stat.S_IWOTH and not info.st_mode & stat.S_ISVTX:
            return ()  # anyone could rename entries here under our feet: prove nothing, remove nothing
        with os.scandir(root_fd) as entries:
            names = [entry.name for entry in entries if entry.name.startswith(PREFIXES)]
        for name in names:
            if _remove_if_stale(root_fd, name):
                swept.append(name)
    finally:
        os.close(root_fd)
    return tuple(swept)


def _remove_if_stale(root_fd: int, name: str) -> bool:
    try:
        directory = os.open(name, _DIRECTORY_FLAGS, dir_fd=root_fd)
    except OSError:
        return False  # gone, a symlink, or not a directory
    try:
        info = os.fstat(directory)
        if info.st_uid != os.geteuid() or info.st_mode & 0o077:
            return False  # not ours, or open to others: not one mkdtemp made for us
        try:
            lock = os.open(OWNER_LOCK, os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, dir_fd=directory)
        except OSError:
            return False  # no lock file: being created, or made by a version that did not lock
        try:
            if not stat.S_ISREG(os.fstat(lock).st_mode):
                return False
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as error:
                if error.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
                    return False  # its owner is alive
                raise
            if not _is_marker(os.pread(lock, 4096, 0)):
                return False
            shutil.rmtree(name, dir_fd=root_fd)
            _log.info("removed the scratch directory %s of a process that died", name)
            return True
        finally:
            os.close(lock)
    except OSError:
        return False
    finally:
        os.close(directory)


def _is_marker(content: bytes) -> bool:
    try:
        marker = orjson.loads(content)
    except orjson.JSONDecodeError:
        return False
    return isinstance(marker, dict) and marker.get("version") == MARKER_VERSION and isinstance(marker.get("pid"), int)
