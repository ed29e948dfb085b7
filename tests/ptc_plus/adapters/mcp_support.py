"""Helpers and fixtures for the MCP source tests (``test_mcp_*.py`` import them).

Real reference hosts whose user config names real MCP servers.

Servers are named in the *user* file (no workspace consent involved): the
fixture server (``mcp_fixture_server.py``, started with this interpreter), the
``mcp-server-time`` and ``mcp-server-git`` installed from the index. Every
fixture-server command line carries a mark unique to the test, so ``ps`` finds
exactly this test's server processes.
"""

from __future__ import annotations

import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import pytest

from ptc_plus.adapters.mcp.launcher import SUPERVISOR
from tests.ptc_plus.session.conftest import (  # noqa: F401 - fixtures the test modules import
    UNCONFINED,
    isolated_env,
    open_host,
    workspace,
    write_user_config,
)

FIXTURE = Path(__file__).with_name("mcp_fixture_server.py")
BIN = Path(sys.executable).parent


def server_table(name: str, command: str, args: Sequence[str], *, timeout_s: float = 20.0) -> str:
    quoted = ", ".join(f'"{a}"' for a in args)
    return f'\n[mcp.servers.{name}]\ncommand = "{command}"\nargs = [{quoted}]\ntimeout_s = {timeout_s}\n'


def fixture_table(mark: str, *, name: str = "fixture", timeout_s: float = 20.0) -> str:
    return server_table(name, sys.executable, [str(FIXTURE), mark], timeout_s=timeout_s)


def counted_table(mark: str, starts: Path, *, name: str = "fixture", extra: Sequence[str] = ()) -> str:
    """The fixture server, appending a line to ``starts`` each time it starts (``extra``: more arguments)."""
    table = server_table(name, sys.executable, [str(FIXTURE), mark, *extra], timeout_s=60.0)
    return f'{table}env = {{ FIXTURE_STARTS = "{starts}" }}\n'


def starts_of(starts: Path) -> int:
    """How many times the counted fixture server started (see :func:`counted_table`)."""
    return len(starts.read_text("utf-8").splitlines()) if starts.exists() else 0


def configure(tmp_path: Path, *tables: str) -> Path:
    """The user config: programs unconfined (no bubblewrap needed) and ``tables`` (``[mcp.servers.*]``)."""
    return write_user_config(tmp_path, UNCONFINED + "".join(tables))


@pytest.fixture
def mark() -> str:
    return f"ptc-mcp-test-{uuid.uuid4().hex[:12]}"


def processes_with(mark: str) -> list[int]:
    """Live processes whose command line holds ``mark`` (zombies are dead: not counted)."""
    out = subprocess.run(["ps", "-ww", "-eo", "pid=,stat=,args="], capture_output=True, text=True, check=True).stdout
    found = []
    for line in out.splitlines():
        pid, stat, args = line.split(None, 2) if len(line.split(None, 2)) == 3 else (*line.split(None, 1), "")
        if mark in args and not stat.startswith("Z") and "ps -eo" not in args:
            found.append(int(pid))
    return found


def servers_with(mark: str) -> list[int]:
    """:func:`processes_with` less the supervisors every server runs under (ADR 0093)."""
    return [pid for pid in processes_with(mark) if SUPERVISOR.name not in _args(pid)]


def _args(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def settled_values(session: object) -> Mapping[str, object]:
    """The value of the session's last ``run_code`` result (the program's return value)."""
    settled = [e.data["result"] for e in session.log.events if e.type == "tool-settled"]  # type: ignore[attr-defined]
    outer = [r for r in settled if r["tool"] == "run_code"][-1]
    assert outer.get("error") is None, outer
    value: Mapping[str, object] = outer["value"]["value"]
    return value


def within(condition: Callable[[], bool], bound_s: float = 60.0) -> bool:
    """Whether ``condition`` holds at some point within a generous bound (polled)."""
    deadline = time.monotonic() + bound_s
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True
