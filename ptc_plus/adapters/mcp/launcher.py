"""How every MCP server is started: under :mod:`~ptc_plus.adapters.mcp.supervisor`, which ends it with the host.

The SDK starts the supervisor in a new session; the supervisor watches the
host with ``PR_SET_PDEATHSIG`` (the kernel's signal when the hub's thread —
which lives as long as the host process — ends, ``SIGKILL`` of the host
included), is a subreaper of everything the server starts, and kills that
whole tree and process group when the host goes or the server ends (ADR 0072,
ADR 0093).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

SUPERVISOR = Path(__file__).with_name("supervisor.py")


def launch_argv(command: str, args: tuple[str, ...]) -> tuple[str, list[str]]:
    """``(program, arguments)`` that start ``command args`` under the supervisor (Linux; elsewhere unchanged)."""
    if not sys.platform.startswith("linux"):
        return command, list(args)
    return sys.executable, ["-I", "-S", str(SUPERVISOR), str(os.getpid()), command, *args]
