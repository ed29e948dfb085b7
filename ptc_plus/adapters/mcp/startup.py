"""Why a server did not start, in words a person can act on (ADR 0092).

A failed start used to read ``ExceptionGroup: unhandled errors in a TaskGroup``.
This module gathers what the hub needs to say more: whether ``command`` is
found on the PATH the server gets (checked before spawning: GUI clients start
servers with a minimal PATH), the last lines the server wrote on stderr (kept
by a bounded reader, never the whole stream), and the exit code of a process
that ended before its handshake.
"""

from __future__ import annotations

import collections
import contextvars
import os
import shutil
import threading
from collections.abc import Mapping
from typing import Any, TextIO

from ptc_plus.adapters.mcp.errors import CommandNotFound
from ptc_plus.i18n import message

TAIL_LINES = 12
"""How many of the server's last stderr lines an error quotes."""
_LINE_BYTES = 400
"""A longer stderr line is cut: the error stays readable."""
_DRAIN_S = 5.0
"""How long a dead server's stderr may take to reach its end (a grandchild may still hold it open)."""


def searched_path(env: Mapping[str, str]) -> str:
    """The PATH the server's command is looked up on: its own ``env``'s, else the host process's."""
    return env.get("PATH") or os.environ.get("PATH") or os.defpath


def check_command(server: str, command: str, env: Mapping[str, str], cwd: str | None) -> None:
    """Raise :class:`CommandNotFound` unless ``command`` names an executable the launcher can start.

    A command with a slash is a path (relative to ``cwd``, as ``execvp`` reads it); a bare name is
    looked up on :func:`searched_path`.
    """
    path = searched_path(env)
    if "/" in command:
        target = os.path.join(cwd or os.getcwd(), os.path.expanduser(command))
        if os.path.isfile(target) and os.access(target, os.X_OK):
            return
    elif shutil.which(command, path=path) is not None:
        return
    raise CommandNotFound(server=server, command=command, path=path)


class StderrTail:
    """A pipe the server writes its stderr to and a daemon thread keeping its last lines."""

    def __init__(self) -> None:
        read_fd, write_fd = os.pipe()
        self.writer: TextIO = os.fdopen(write_fd, "w")
        self._lines: collections.deque[str] = collections.deque(maxlen=TAIL_LINES)
        self._thread = threading.Thread(target=self._read, args=(read_fd,), name="ptc-plus-mcp-stderr", daemon=True)
        self._thread.start()

    def _read(self, fd: int) -> None:
        with os.fdopen(fd, "rb") as reader:
            for raw in reader:
                line = raw[:_LINE_BYTES].decode("utf-8", "replace").rstrip()
                if line:
                    self._lines.append(line)

    def close_writer(self) -> None:
        """Our copy of the write end is closed: the reader ends when the server's copies are."""
        if not self.writer.closed:
            self.writer.close()

    def drain(self) -> None:
        """Wait (bounded) until everything the ended server wrote was read; call after :meth:`close_writer`."""
        self._thread.join(_DRAIN_S)

    def text(self) -> str:
        """The last lines read so far, joined with `` | ``, or the locale's "(none)"."""
        lines = list(self._lines)
        return " | ".join(lines) if lines else message("ptc.mcp.no-stderr")


_SPAWNED: contextvars.ContextVar[list[Any] | None] = contextvars.ContextVar("ptc_plus_mcp_spawned", default=None)
_HOOKED = threading.Lock()
_spawn: Any = None
"""The SDK's own spawn, once :func:`_hook_spawns` has put :func:`_recording_spawn` in its place."""


async def _recording_spawn(*args: Any, **kwargs: Any) -> Any:
    # The SDK's stdio client keeps its process to itself; the exit code of a server that died before
    # its handshake is what a person needs first, so the process is noted for the task that spawned it.
    process = await _spawn(*args, **kwargs)
    spawned = _SPAWNED.get()
    if spawned is not None:
        spawned.append(process)
    return process


def _hook_spawns() -> None:
    """Route the SDK's spawns through :func:`_recording_spawn`, once; done at the first start, not at import,
    so a process that starts no server never imports the SDK (ADR 0105)."""
    global _spawn
    with _HOOKED:
        if _spawn is not None:
            return
        import mcp.client.stdio as sdk_stdio

        _spawn = sdk_stdio._create_platform_compatible_process
        sdk_stdio._create_platform_compatible_process = _recording_spawn


def record_spawns() -> list[Any]:
    """From now on in this task (and those it starts), processes the stdio client spawns are appended here."""
    _hook_spawns()
    spawned: list[Any] = []
    _SPAWNED.set(spawned)
    return spawned


def exit_code(spawned: list[Any]) -> int | None:
    """The exit code of the (last) recorded process, ``None`` when it is still running or none was spawned."""
    if not spawned:
        return None
    code = spawned[-1].returncode
    return code if isinstance(code, int) else None
