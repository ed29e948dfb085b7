"""The supervisor every MCP server runs under: the server and everything it starts end with the host (ADR 0093).

Run as a script (``python -I -S supervisor.py HOST_PID COMMAND [ARG...]``,
standard library only: it must start fast and import nothing of the
workspace). The SDK starts it in a new session, so it leads the process group
that the server and everything the server starts belong to. It

- asks the kernel for ``HOST_GONE`` when the host's hub thread ends
  (``PR_SET_PDEATHSIG``: delivered even when the host is ``SIGKILL``-ed) and
  checks its parent is still the host (closing the race where the host died
  first);
- becomes a subreaper (``PR_SET_CHILD_SUBREAPER``), so every process the
  server starts — a wrapper's real server (``sh -c``, ``npx``, ``uvx``), a
  daemon that left the group with ``setsid``, an orphan of either — stays in
  its process tree;
- forks the server (which gets ``PR_SET_PDEATHSIG(SIGKILL)`` towards the
  supervisor) and hands it the stdio pipes, keeping none of them itself, so
  the host sees end of output as soon as the server's side closes;
- on ``HOST_GONE`` kills its whole tree pass after pass until a pass finds
  nothing, then its process group at once (itself included);
- when the server ends by itself, kills whatever it left behind the same way
  and exits with the server's exit code (``128 + n`` for signal ``n``), so the
  host reads the server's own status.

``SIGTERM`` (the SDK's polite stop, sent to the whole group) is left to the
server: the supervisor follows the server's exit rather than cutting its grace.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import time
from types import FrameType

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
HOST_GONE = signal.SIGUSR1
"""The parent-death signal: catchable (unlike ``SIGKILL``), so the supervisor can kill its tree first."""
NOT_STARTED = 70
"""Exit code when the host was gone before the supervisor could watch it (nothing was started)."""
NOT_FOUND = 127
"""Exit code when the server's program could not be executed (as a shell reports it)."""


def _prctl(option: int, value: int) -> None:
    ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)


def _tree(root: int) -> set[int]:
    """Live (non-zombie) descendants of ``root``, by a scan of ``/proc`` (one snapshot per pass)."""
    parents: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields and fields[0] != b"Z":
            parents.setdefault(int(fields[1]), []).append(int(entry))
    found: set[int] = set()
    todo = [root]
    while todo:
        for child in parents.get(todo.pop(), ()):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def _reap() -> None:
    with contextlib.suppress(ChildProcessError):
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass


def kill_tree() -> None:
    """SIGKILL every descendant, pass after pass, until a pass finds none (a fork mid-pass is found next)."""
    me = os.getpid()
    while True:
        _reap()
        found = _tree(me)
        if not found:
            return
        for pid in found:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.005)  # a killed process takes a moment to become a zombie


def _host_gone(_signum: int, _frame: FrameType | None) -> None:
    kill_tree()
    os.killpg(0, signal.SIGKILL)  # the group as one, the supervisor with it


def main(argv: list[str]) -> int:
    host, command = int(argv[1]), argv[2:]
    signal.signal(HOST_GONE, _host_gone)
    _prctl(PR_SET_PDEATHSIG, HOST_GONE)
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    if os.getppid() != host:
        return NOT_STARTED
    signal.signal(signal.SIGTERM, lambda _signum, _frame: None)  # the server's to answer; we follow its exit
    me = os.getpid()
    server = os.fork()
    if server == 0:
        signal.signal(HOST_GONE, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != me:
            os._exit(NOT_STARTED)
        try:
            os.execvp(command[0], command)
        except OSError as error:
            os.write(2, f"{command[0]}: {error.strerror}\n".encode())
        os._exit(NOT_FOUND)
    quiet = os.open(os.devnull, os.O_RDWR)
    os.dup2(quiet, 0)
    os.dup2(quiet, 1)
    while True:
        pid, status = os.waitpid(-1, 0)
        if pid == server:
            break
    kill_tree()
    code = os.waitstatus_to_exitcode(status)
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    os._exit(main(sys.argv))
