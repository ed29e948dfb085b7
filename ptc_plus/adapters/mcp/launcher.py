"""The tiny launcher every MCP server is started through: its process dies with the hub's thread.

``PR_SET_PDEATHSIG`` makes the kernel send ``SIGKILL`` to the server when the
thread that started it ends — the hub's thread, which lives as long as the
host process — so a host that is killed (even by ``SIGKILL``) leaves no server
behind. The flag survives ``execve``; the launcher sets it and then becomes
the server. The parent check closes the race where the host died before the
flag was set (ADR 0072).
"""

from __future__ import annotations

import os
import sys

_STARTER = (
    "import ctypes,os,signal,sys\n"
    "ctypes.CDLL(None,use_errno=True).prctl(1,signal.SIGKILL,0,0,0)\n"
    "os.getppid()==int(sys.argv[1]) or os._exit(70)\n"
    "os.execvp(sys.argv[2],sys.argv[2:])\n"
)


def launch_argv(command: str, args: tuple[str, ...]) -> tuple[str, list[str]]:
    """``(program, arguments)`` that start ``command args`` under the launcher (Linux; elsewhere unchanged)."""
    if not sys.platform.startswith("linux"):
        return command, list(args)
    return sys.executable, ["-I", "-S", "-c", _STARTER, str(os.getpid()), command, *args]
