"""Noticing that a kernel-mode cell touched the OS directly (a *volatile* cell).

Replay rebuilds a kernel by running its cells again with their recorded tool
results; a cell that wrote a file, started a process, opened a connection or
called foreign code had effects replay cannot reproduce. An audit hook
(:func:`sys.addaudithook`, installed once the process enters kernel mode and
never removable) keeps the *first* such event since the last ``done`` as
``{"kind": ..., "detail": ...}`` with kind ``file-write``, ``subprocess``,
``socket`` or ``ctypes``.

The worker's own machinery raises none of these events: the channel and the
ledger use ``os.read``/``os.write`` on descriptors it already holds, and
bytecode caches are not written in kernel mode, so an ``import`` only reads.
"""

from __future__ import annotations

import os
import sys
import threading
from typing import Any

from . import foreign

FILE_WRITE = "file-write"
SUBPROCESS = "subprocess"
SOCKET = "socket"
CTYPES = "ctypes"

_EVENTS = {
    **dict.fromkeys(
        (
            "os.remove",
            "os.rename",
            "os.mkdir",
            "os.rmdir",
            "os.chmod",
            "os.chown",
            "os.symlink",
            "os.link",
            "os.truncate",
            "os.utime",
            "os.chflags",
            "os.lchflags",
            "os.removexattr",
            "os.setxattr",
        ),
        FILE_WRITE,
    ),
    **dict.fromkeys(
        (
            "subprocess.Popen",
            "os.system",
            "os.exec",
            "os.posix_spawn",
            "os.spawn",
            "os.fork",
            "os.forkpty",
            "pty.spawn",
        ),
        SUBPROCESS,
    ),
    **dict.fromkeys(("socket.connect", "socket.bind", "socket.sendto", "socket.sendmsg"), SOCKET),
    **dict.fromkeys(("ctypes.dlopen", "ctypes.dlsym", "ctypes.dlsym/handle", "ctypes.call_function"), CTYPES),
}
_WRITE_MODE = frozenset("wax+")
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
DETAIL_CHARS = 200

_lock = threading.Lock()
_first: dict[str, str] | None = None
_installed = False


def install() -> None:
    """Start watching (idempotent). Bytecode caches stop being written: an import must only read."""
    global _installed
    if _installed:
        return
    _installed = True
    sys.dont_write_bytecode = True
    sys.addaudithook(_hook)


def peek() -> dict[str, str] | None:
    """The first OS-touching event since the last :func:`take`, or ``None``."""
    return dict(_first) if _first is not None else None


def take() -> dict[str, str] | None:
    """The first OS-touching event since the last call (for ``done``); starts the next window."""
    global _first
    with _lock:
        first, _first = _first, None
    return first


def _hook(event: str, args: tuple[Any, ...]) -> None:
    global _first
    if _first is not None:
        return
    try:
        kind = _EVENTS.get(event)
        if kind is None:
            if event == "open":
                if not _writes(args):
                    return
                kind = FILE_WRITE
            elif event.startswith("shutil."):
                kind = FILE_WRITE
            else:
                return
        detail = _detail(event, args)
        with _lock:
            if _first is None:
                _first = {"kind": kind, "detail": detail}
    except Exception:  # an exception here would make the program's operation fail: never raise
        return


def _writes(args: tuple[Any, ...]) -> bool:
    """Whether an ``open`` event (path, mode, flags) opens for writing, appending or creating."""
    mode = args[1] if len(args) > 1 else None
    flags = args[2] if len(args) > 2 else 0
    if type(mode) is str and not _WRITE_MODE.isdisjoint(mode):
        return True
    return type(flags) is int and bool(flags & _WRITE_FLAGS)


_SHOWN_ARGUMENT = {
    "subprocess.Popen": 1,
    "socket.connect": 1,
    "socket.bind": 1,
    "socket.sendto": 1,
    "socket.sendmsg": 1,
}
"""Events whose telling argument is not the first (the socket object, Popen's executable)."""


def _detail(event: str, args: tuple[Any, ...]) -> str:
    """The event and its telling argument when that is plain data (nothing of the program's code runs)."""
    index = _SHOWN_ARGUMENT.get(event, 0)
    text = f"{event} {_shown(args[index] if len(args) > index else None)}"
    return text if len(text) <= DETAIL_CHARS else text[:DETAIL_CHARS] + "…"


def _shown(value: Any) -> str:
    kind = type(value)
    if kind in (str, int, float, bool) or value is None:
        return repr(value)
    if kind is bytes:
        return repr(value[:DETAIL_CHARS])
    if kind in (tuple, list) and all(type(item) in (str, bytes, int) for item in value[:20]):
        return repr(kind(value[:20]))
    return f"<{foreign.type_name(kind)}>"
