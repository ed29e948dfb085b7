"""Host-side file access beneath a workspace root, resolved on the opened descriptors.

A host tool runs on the host, unconfined, while an untrusted program may be
changing the same workspace: it can replace a directory with a symlink that
leads out of the workspace, swap the two atomically (``renameat2`` with
``RENAME_EXCHANGE``) at any moment, or leave a FIFO or a device node where a
file is expected. Checking a path and then opening it by name loses that
race: the check sees the workspace, the open follows the symlink to
``/etc/shadow`` or writes into the host's ``/tmp``.

This module never checks-then-opens. Every path is resolved one component
at a time, each opened relative to the descriptor of its parent
(``dir_fd``) with ``O_NOFOLLOW`` (and ``O_DIRECTORY`` for directories), so a
component that is a symlink at the moment it is opened is refused, and what
a call reads or writes is whatever the descriptors it opened refer to —
always beneath the root. Files are opened with ``O_NONBLOCK`` and checked
with ``fstat`` before any byte is read, so a FIFO or a device is refused
instead of blocking the host or reading forever.

Contract (every function):

- ``path`` is relative to the root, ``/``-separated. Absolute paths and
  ``..`` components are refused (:class:`OutsideWorkspace`); empty and
  ``.`` components are ignored, so ``""`` and ``"."`` name the root itself.
- No symlink is ever followed, wherever it is in the path
  (:class:`SymlinkRefused`) — even one whose target lies inside the root: a
  symlink can be repointed between any two system calls.
- Only regular files are opened as files and only directories as
  directories (:class:`NotARegularFile`, :class:`NotADirectory`). Walks and
  listings skip symlinks, FIFOs, sockets and devices.
- Errors about the path are :class:`WorkspacePathError` subclasses, each
  with a stable :attr:`~WorkspacePathError.code` (the :class:`ToolFailure`
  code a tool should report: :meth:`~WorkspacePathError.tool_failure`).
  Other I/O errors (permissions, a full disk) are raised as ``OSError``.
- Descriptors returned to the caller are close-on-exec; the caller closes
  them. The functions block on disk I/O: an async tool body calls them
  through ``asyncio.to_thread`` (never on the event loop).

What it does not cover: the root itself is opened by name (the host chose
it; the program cannot rename the workspace it runs in). A directory a call
holds open stays beneath the root because a confined program can rename
only within its workspace mount (``rename`` across mounts fails with
``EXDEV``); an unconfined process moving it out is not defended. A hard link is a
regular file like any other; a confined program can only link files it can
already see inside its own workspace mount (``link`` across mounts fails
with ``EXDEV``). Linux has ``openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)``
for this, but Python has no wrapper; the component walk is portable.
"""

from __future__ import annotations

import contextlib
import enum
import errno
import fcntl
import os
import secrets
import stat
from collections.abc import Collection, Iterator
from pathlib import PurePosixPath
from typing import ClassVar

import attrs

from hookspecs.i18n import message
from hookspecs.services import ToolFailure

_DIRECTORY_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY
_ACCESS_AND_CREATION = os.O_RDONLY | os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_TRUNC | os.O_APPEND
_READ_CHUNK = 1 << 20
_MAX_WALK_DEPTH = 64
"""How many levels below its start :func:`walk_files` enters (it holds one descriptor per level)."""


class WorkspacePathError(Exception):
    """A path that cannot be used beneath the root; ``code`` is stable, the message localized.

    The base class itself means a malformed path (a NUL byte, a name the
    system refuses); the subclasses say why a well-formed path was refused.
    """

    code: ClassVar[str] = "invalid-path"

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)
        super().__init__(message(f"workspace-path.{self.code}", path=self.path))

    def tool_failure(self) -> ToolFailure:
        """The :class:`ToolFailure` a tool body raises for this error (same code, message, ``{"path": ...}``)."""
        return ToolFailure(self.code, str(self), {"path": self.path})


class OutsideWorkspace(WorkspacePathError):
    """An absolute path, or one with a ``..`` component."""

    code: ClassVar[str] = "outside-workspace"


class SymlinkRefused(WorkspacePathError):
    """A component of the path is a symlink (symlinks are never followed)."""

    code: ClassVar[str] = "symlink"


class PathNotFound(WorkspacePathError):
    """A component of the path does not exist."""

    code: ClassVar[str] = "not-found"


class NotADirectory(WorkspacePathError):
    """A component that must be a directory is something else."""

    code: ClassVar[str] = "not-a-directory"


class NotARegularFile(WorkspacePathError):
    """The path names a directory, FIFO, socket or device where a regular file is required."""

    code: ClassVar[str] = "not-a-regular-file"


class EntryKind(enum.StrEnum):
    """What a directory entry is, as seen without following it."""

    FILE = "file"
    DIRECTORY = "directory"
    SYMLINK = "symlink"
    OTHER = "other"
    """A FIFO, socket or device node."""


@attrs.frozen
class DirectoryEntry:
    """One entry of :func:`list_directory`: its name, kind and size in bytes (``lstat``)."""

    name: str
    kind: EntryKind
    size: int


@attrs.frozen
class WorkspaceFile:
    """A regular file found by :func:`walk_files`: its ``/``-separated path relative to the root, and its size."""

    path: str
    size: int


def relative_parts(path: str | os.PathLike[str]) -> tuple[str, ...]:
    """The components of ``path`` below the root, without empty and ``.`` components.

    :raises OutsideWorkspace: ``path`` is absolute or has a ``..`` component.
    :raises WorkspacePathError: ``path`` contains a NUL byte.
    """
    text = os.fspath(path)
    if "\0" in text:
        raise WorkspacePathError(text)
    pure = PurePosixPath(text)
    if pure.is_absolute():
        raise OutsideWorkspace(text)
    parts = tuple(part for part in pure.parts if part not in ("", "."))
    if ".." in parts:
        raise OutsideWorkspace(text)
    return parts


@contextlib.contextmanager
def workspace_root(root: str | os.PathLike[str]) -> Iterator[int]:
    """Open the directory ``root`` (by name: the host chose it) and yield its descriptor; closed on exit.

    :raises NotADirectory: ``root`` is not a directory.
    :raises PathNotFound: ``root`` does not exist.
    """
    try:
        fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except FileNotFoundError:
        raise PathNotFound(root) from None
    except NotADirectoryError:
        raise NotADirectory(root) from None
    try:
        yield fd
    finally:
        os.close(fd)


def open_directory(root_fd: int, path: str | os.PathLike[str] = ".", *, create: bool = False) -> int:
    """Open the directory ``path`` beneath ``root_fd``; return its descriptor (the caller closes it).

    With ``create``, missing components are created (mode ``0o777`` before the
    umask), each with ``mkdir`` relative to its parent's descriptor.

    :raises SymlinkRefused: a component is a symlink.
    :raises NotADirectory: a component is not a directory.
    :raises PathNotFound: a component is missing (and ``create`` is false).
    :raises OutsideWorkspace: see :func:`relative_parts`.
    """
    return _open_directory(root_fd, relative_parts(path), os.fspath(path), create=create)


def open_file(root_fd: int, path: str | os.PathLike[str], flags: int = os.O_RDONLY, *, mode: int = 0o666) -> int:
    """Open the regular file ``path`` beneath ``root_fd``; return its descriptor (the caller closes it).

    ``flags`` are the access mode and creation flags (``O_RDONLY``,
    ``O_WRONLY``, ``O_RDWR``, ``O_CREAT``, ``O_EXCL``, ``O_TRUNC``,
    ``O_APPEND``); ``O_NOFOLLOW``, ``O_NONBLOCK``, ``O_NOCTTY`` and
    ``O_CLOEXEC`` are always added, and the file is checked with ``fstat``
    before the descriptor is returned (in blocking mode again). The parent
    directory must exist. An entry that is not a regular file is refused
    without being opened when it already is one at the time of the call; a
    FIFO that replaces a file at the last moment is opened without blocking
    and refused. ``O_TRUNC`` is applied by the open itself, so prefer
    :func:`replace_file` for writing whole files.

    :raises NotARegularFile: the entry is a directory, FIFO, socket or device.
    :raises SymlinkRefused, NotADirectory, PathNotFound, OutsideWorkspace: see :func:`open_directory`.
    :raises ValueError: ``flags`` holds other flags, or ``path`` names the root.
    """
    if flags & ~_ACCESS_AND_CREATION:
        raise ValueError(f"open_file takes access and creation flags only, got {flags:#o}")
    parts = relative_parts(path)
    if not parts:
        raise ValueError("open_file needs a file name, not the root")
    shown = os.fspath(path)
    parent = _open_directory(root_fd, parts[:-1], shown, create=False)
    try:
        return _open_in(parent, parts[-1], flags, mode, shown)
    finally:
        os.close(parent)


def read_bytes(root_fd: int, path: str | os.PathLike[str], *, max_bytes: int | None = None) -> bytes:
    """The contents of the regular file ``path`` beneath ``root_fd`` (at most ``max_bytes`` when given).

    :raises NotARegularFile, SymlinkRefused, NotADirectory, PathNotFound, OutsideWorkspace: see :func:`open_file`.
    """
    fd = open_file(root_fd, path)
    try:
        chunks: list[bytes] = []
        remaining = max_bytes
        while remaining is None or remaining > 0:
            chunk = os.read(fd, _READ_CHUNK if remaining is None else min(_READ_CHUNK, remaining))
            if not chunk:
                break
            chunks.append(chunk)
            if remaining is not None:
                remaining -= len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def replace_file(
    root_fd: int, path: str | os.PathLike[str], data: bytes, *, create_parents: bool = True, mode: int = 0o666
) -> None:
    """Create or atomically replace the file ``path`` beneath ``root_fd`` with ``data``.

    The data goes to a new temporary file in the target's directory (opened
    with ``O_CREAT | O_EXCL | O_NOFOLLOW`` relative to that directory's
    descriptor), is flushed with ``fsync``, then renamed over the target
    within the same directory descriptor: a symlink, FIFO or device at the
    target is replaced, never written through. With ``create_parents``,
    missing directories are created as by :func:`open_directory`.

    :raises NotARegularFile: the target is a directory.
    :raises SymlinkRefused, NotADirectory, PathNotFound, OutsideWorkspace: see :func:`open_directory`.
    :raises ValueError: ``path`` names the root.
    """
    parts = relative_parts(path)
    if not parts:
        raise ValueError("replace_file needs a file name, not the root")
    shown = os.fspath(path)
    parent = _open_directory(root_fd, parts[:-1], shown, create=create_parents)
    try:
        name = parts[-1]
        # A readable prefix of the name, cut in bytes: a name may take up to 255 of them.
        prefix = os.fsencode(name)[:64].decode("utf-8", "ignore")
        while True:
            temporary = f".{prefix}.{secrets.token_hex(6)}.tmp"
            try:
                fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _FILE_FLAGS, mode, dir_fd=parent)
            except FileExistsError:
                continue  # the program took that name first: draw another
            break
        try:
            with os.fdopen(fd, "wb", closefd=True) as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temporary, name, src_dir_fd=parent, dst_dir_fd=parent)
        except BaseException as error:
            with contextlib.suppress(OSError):
                os.unlink(temporary, dir_fd=parent)
            if isinstance(error, IsADirectoryError):
                raise NotARegularFile(shown) from None
            raise
    finally:
        os.close(parent)


def list_directory(root_fd: int, path: str | os.PathLike[str] = ".") -> list[DirectoryEntry]:
    """The entries of the directory ``path`` beneath ``root_fd``, sorted by name, none of them followed.

    An entry that vanishes while it is listed is left out.

    :raises SymlinkRefused, NotADirectory, PathNotFound, OutsideWorkspace: see :func:`open_directory`.
    """
    fd = open_directory(root_fd, path)
    try:
        return _entries(fd)
    finally:
        os.close(fd)


def walk_files(
    root_fd: int, path: str | os.PathLike[str] = ".", *, skip_directories: Collection[str] = ()
) -> Iterator[WorkspaceFile]:
    """The regular files under the directory ``path`` beneath ``root_fd``, depth first, sorted by name.

    Each directory's files come before its subdirectories. Symlinks,
    FIFOs, sockets and devices are skipped, as are directories named in
    ``skip_directories`` (at any depth). Each subdirectory is opened relative
    to its parent's open descriptor with ``O_NOFOLLOW``, so a directory
    swapped for a symlink while the walk runs is skipped, never entered, and
    each directory is opened once. Directories more than 64 levels below
    ``path`` are not entered: the walk holds one descriptor per level, and a
    program can nest directories far deeper than any project at almost no
    cost. Stop iterating early to bound the work; the descriptors are closed
    when the iterator is exhausted or closed.

    :raises SymlinkRefused, NotADirectory, PathNotFound, OutsideWorkspace: for ``path`` itself.
    """
    start = relative_parts(path)
    fd: int | None = _open_directory(root_fd, start, os.fspath(path), create=False)
    directory = start
    # The open directories from ``path`` down to the current one: descriptor, path, subdirectories to enter.
    levels: list[tuple[int, tuple[str, ...], Iterator[str]]] = []
    try:
        while True:
            if fd is not None:
                try:
                    entries = _entries(fd)
                except BaseException:
                    os.close(fd)
                    raise
                deeper = len(levels) < _MAX_WALK_DEPTH
                names = [e.name for e in entries if e.kind is EntryKind.DIRECTORY and e.name not in skip_directories]
                levels.append((fd, directory, iter(names if deeper else ())))
                for entry in entries:
                    if entry.kind is EntryKind.FILE:
                        yield WorkspaceFile(path="/".join((*directory, entry.name)), size=entry.size)
            if not levels:
                return
            parent, parent_path, pending = levels[-1]
            name = next(pending, None)
            fd = None
            if name is None:
                levels.pop()
                os.close(parent)
                continue
            directory = (*parent_path, name)
            with contextlib.suppress(OSError):  # replaced, removed or made unreadable since it was listed
                fd = os.open(name, _DIRECTORY_FLAGS, dir_fd=parent)
    finally:
        for level_fd, _path, _pending in levels:
            os.close(level_fd)


def _open_directory(root_fd: int, parts: tuple[str, ...], shown: str, *, create: bool) -> int:
    fd = os.open(".", _DIRECTORY_FLAGS, dir_fd=root_fd)
    try:
        for name in parts:
            child = _open_child_directory(fd, name, shown, create=create)
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


def _open_child_directory(parent: int, name: str, shown: str, *, create: bool) -> int:
    for _ in range(2):
        try:
            return os.open(name, _DIRECTORY_FLAGS, dir_fd=parent)
        except FileNotFoundError:
            if not create:
                raise PathNotFound(shown) from None
            with contextlib.suppress(FileExistsError):  # another writer made it first: open what is there
                os.mkdir(name, 0o777, dir_fd=parent)
        except OSError as error:
            raise _refusal(error, parent, name, shown, directory=True) from None
    raise PathNotFound(shown)  # created, then removed again before it could be opened


def _open_in(parent: int, name: str, flags: int, mode: int, shown: str) -> int:
    # Refuse what is visibly not a regular file without opening it (opening a device can have effects);
    # the fstat after the open is the check that counts.
    try:
        seen = os.stat(name, dir_fd=parent, follow_symlinks=False)
    except FileNotFoundError:
        if not flags & os.O_CREAT:
            raise PathNotFound(shown) from None
    else:
        if stat.S_ISLNK(seen.st_mode):
            raise SymlinkRefused(shown)
        if not stat.S_ISREG(seen.st_mode):
            raise NotARegularFile(shown)
    try:
        fd = os.open(name, flags | _FILE_FLAGS, mode, dir_fd=parent)
    except FileNotFoundError:
        raise PathNotFound(shown) from None
    except OSError as error:
        raise _refusal(error, parent, name, shown, directory=False) from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise NotARegularFile(shown)
        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _refusal(error: OSError, parent: int, name: str, shown: str, *, directory: bool) -> Exception:
    """The typed refusal for an ``open`` that failed on ``name`` in ``parent``, else ``error`` itself."""
    if error.errno in (errno.ELOOP, errno.EMLINK):  # O_NOFOLLOW met a symlink (EMLINK on FreeBSD)
        return SymlinkRefused(shown)
    if error.errno in (errno.EISDIR, errno.ENXIO, errno.ENODEV):
        return NotARegularFile(shown)  # a directory opened for writing; a FIFO without reader; a device
    if error.errno == errno.ENOTDIR and directory:
        # O_DIRECTORY | O_NOFOLLOW on a symlink fails with ENOTDIR too. Only an entry that is still a
        # plain non-directory is "not a directory"; one that is now a symlink or a directory was a
        # symlink or was swapped while we opened it.
        try:
            mode = os.stat(name, dir_fd=parent, follow_symlinks=False).st_mode
        except OSError:
            return SymlinkRefused(shown)
        return SymlinkRefused(shown) if stat.S_ISLNK(mode) or stat.S_ISDIR(mode) else NotADirectory(shown)
    return error


def _entries(fd: int) -> list[DirectoryEntry]:
    entries: list[DirectoryEntry] = []
    with os.scandir(fd) as scanner:
        for item in scanner:
            try:
                info = item.stat(follow_symlinks=False)
            except FileNotFoundError:
                continue
            entries.append(DirectoryEntry(name=item.name, kind=_kind(info.st_mode), size=info.st_size))
    entries.sort(key=lambda entry: entry.name)
    return entries


def _kind(mode: int) -> EntryKind:
    if stat.S_ISREG(mode):
        return EntryKind.FILE
    if stat.S_ISDIR(mode):
        return EntryKind.DIRECTORY
    if stat.S_ISLNK(mode):
        return EntryKind.SYMLINK
    return EntryKind.OTHER


__all__ = [
    "DirectoryEntry",
    "EntryKind",
    "NotADirectory",
    "NotARegularFile",
    "OutsideWorkspace",
    "PathNotFound",
    "SymlinkRefused",
    "WorkspaceFile",
    "WorkspacePathError",
    "list_directory",
    "open_directory",
    "open_file",
    "read_bytes",
    "relative_parts",
    "replace_file",
    "walk_files",
    "workspace_root",
]
