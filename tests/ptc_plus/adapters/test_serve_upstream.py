"""``ptc-plus mcp-serve`` over an upstream MCP server (``mcp-server-time``), driven by the real ``mcp.Client``.

The upstream server is defined in the user file (no consent needed), so the
served session gets its tools through the plugin's tools hook, as any session
does: the serve code knows nothing of them.
"""

from __future__ import annotations

import sys
from pathlib import Path

import orjson
import pytest

from tests.ptc_plus.adapters.test_serve import (
    Notifications,
    _receipt,
    _texts,
    connect,
    server_env,
    text_of,
    write_config,
)

TIME_SERVER = str(Path(sys.executable).with_name("mcp-server-time"))
USER_CONFIG = f"""version = 1

[runtime]
policy = "danger-full-access"

[mcp.servers.time]
command = "{TIME_SERVER}"
args = ["--local-timezone", "UTC"]
"""
CONVERT = "mcp:time/convert_time"
PROGRAM = """
import asyncio

now, there = await asyncio.gather(
    tools.get_current_time(timezone="UTC"),
    tools.convert_time(source_timezone="UTC", target_timezone="Asia/Tokyo", time="12:00"),
)
return [now["timezone"], there["target"]["datetime"][11:16]]
"""


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return server_env(tmp_path, USER_CONFIG)


@pytest.mark.asyncio
async def test_run_code_calls_upstream_mcp_tools_in_parallel(workspace: Path, env: dict[str, str]) -> None:
    async with connect(workspace, env) as client:
        instructions = client.instructions or ""
        result = await client.call_tool("run_code", {"description": "times", "code": PROGRAM})
    assert "# ── mcp:time ──" in instructions
    assert result.is_error is False, text_of(result)
    body = orjson.loads(text_of(result))
    assert body["value"] == ["UTC", "21:00"]
    assert body["calls"] == 2


@pytest.mark.asyncio
async def test_search_capabilities_finds_an_on_demand_upstream_tool(workspace: Path, env: dict[str, str]) -> None:
    write_config(workspace, {CONVERT: "on-demand"})
    async with connect(workspace, env) as client:
        instructions = client.instructions or ""
        found = await client.call_tool("search_capabilities", {"query": "convert a time between timezones"})
    assert "async def convert_time(" not in instructions
    answer = orjson.loads(text_of(found))
    assert answer["expanded"][0]["identity"] == CONVERT
    assert "async def convert_time(" in answer["text"]


@pytest.mark.asyncio
async def test_turning_the_server_off_refreshes_with_a_notice_and_tools_list_changed(
    workspace: Path, env: dict[str, str]
) -> None:
    notifications = Notifications()
    write_config(workspace, {})
    async with connect(workspace, env, handler=notifications) as client:
        before = await client.call_tool("run_code", {"description": "times", "code": PROGRAM})
        write_config(workspace, {"mcp:time": "off"})
        applied = await client.get_prompt("capabilities_refresh")
        await notifications.wait_tools_changed()
        after = await client.call_tool("run_code", {"description": "times", "code": PROGRAM})
    assert before.is_error is False, text_of(before)
    assert _receipt(applied)["status"] == "applied"
    receipt, notice = _texts(applied)
    assert "mcp:time" in receipt or "get_current_time" in receipt
    assert "get_current_time" in notice and "convert_time" in notice
    assert after.is_error is True  # the plan holds at every depth: the program no longer reaches them
