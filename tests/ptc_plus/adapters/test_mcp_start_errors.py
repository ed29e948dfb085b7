"""A server that does not start says why, in words a person can act on (ADR 0092, issue 29 item 4).

Real processes: a command missing from the PATH the server gets, a server that
writes to stderr and exits, a process that never answers the handshake.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from ptc_plus.adapters.mcp.errors import CommandNotFound, HandshakeTimedOut, ServerExited
from ptc_plus.adapters.mcp.hub import Hub, ServerKey

HOLDER = "test"
EXITS = "import sys\nprint('starting up', file=sys.stderr)\nprint('boom', file=sys.stderr)\nsys.exit(3)\n"
SILENT = "import sys, time\nsys.stdin.read()\ntime.sleep(3600)\n"


@pytest.mark.asyncio
async def test_a_command_missing_from_the_servers_path_names_the_path_and_the_fix(tmp_path: Path) -> None:
    bare = tmp_path / "bin"
    bare.mkdir()
    hub = Hub()
    key = ServerKey(name="time", command="mcp-server-time", env=(("PATH", str(bare)),), timeout_s=60)
    server = hub.hold(HOLDER, key)
    try:
        with pytest.raises(CommandNotFound) as failed:
            await hub.call(server.session())
    finally:
        await hub.arelease(HOLDER)
    assert failed.value.code == "PTC-7020"
    for lang in ("en", "zh"):
        text = failed.value.message(lang)
        assert "mcp-server-time" in text and str(bare) in text and "which mcp-server-time" in text
    assert "absolute path" in failed.value.message("en")


@pytest.mark.asyncio
async def test_a_server_that_exits_before_its_handshake_says_its_exit_code_and_last_stderr_lines(
    tmp_path: Path,
) -> None:
    script = tmp_path / "exits.py"
    script.write_text(EXITS, encoding="utf-8")
    hub = Hub()
    server = hub.hold(HOLDER, ServerKey(name="flaky", command=sys.executable, args=(str(script),), timeout_s=60))
    try:
        with pytest.raises(ServerExited) as failed:
            await hub.call(server.session())
    finally:
        await hub.arelease(HOLDER)
    assert failed.value.code == "PTC-7021" and failed.value.params["exit_code"] == 3
    text = failed.value.message("en")
    assert "exited with code 3" in text and "starting up | boom" in text
    assert "ExceptionGroup" not in text and "TaskGroup" not in text
    assert "3" in failed.value.message("zh") and "boom" in failed.value.message("zh")


@pytest.mark.asyncio
async def test_a_server_that_never_answers_the_handshake_is_a_handshake_timeout(tmp_path: Path) -> None:
    script = tmp_path / "silent.py"
    script.write_text(SILENT, encoding="utf-8")
    hub = Hub()
    # The verdict does not depend on speed: this server never answers, whatever the timeout.
    server = hub.hold(
        HOLDER, ServerKey(name="silent", command=sys.executable, args=(str(script),), timeout_s=60, start_timeout_s=1)
    )
    try:
        with pytest.raises(HandshakeTimedOut) as failed:
            await hub.call(server.session())
    finally:
        await hub.arelease(HOLDER)
    assert failed.value.code == "PTC-7022"
    assert "did not complete the MCP handshake within 1s" in failed.value.message("en")
