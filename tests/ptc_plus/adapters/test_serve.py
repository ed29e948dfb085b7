"""``ptc-plus mcp-serve`` driven by the real ``mcp.Client`` over stdio (the installed command, a subprocess).

The server's session runs programs unconfined (a user-level policy) so these
tests do not depend on bubblewrap; the sandbox has its own tests.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import mcp_types as types
import orjson
import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.subscriptions import ToolsListChanged
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from ptc_plus.i18n import message
from tests.scaffolding import clean_environment

CLI = str(Path(sys.executable).with_name("ptc-plus"))
CONVERT = "host:convert_units"
USER_CONFIG = 'version = 1\n\n[runtime]\npolicy = "danger-full-access"\n'
MANAGED = "version = 1\n\n[management]\nenabled = true\nbudget_tokens = 8000\n"
PROGRAM = "r = await tools.convert_units(value=2, from_unit='km', to_unit='m')\nreturn r"


def server_env(tmp_path: Path, user_config: str) -> dict[str, str]:
    """The server's environment: nothing of the machine's PTC settings, its own user config."""
    user = tmp_path / "xdg" / "ptc-plus" / "config.toml"
    user.parent.mkdir(parents=True)
    user.write_text(user_config, encoding="utf-8")
    return clean_environment(tmp_path)


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return server_env(tmp_path, USER_CONFIG)


def write_config(workspace: Path, choices: dict[str, str]) -> None:
    text = MANAGED + "".join(f'\n[capabilities."{i}"]\ndisclosure = "{v}"\n' for i, v in choices.items())
    path = workspace / ".ptc-plus" / "config.toml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(text, encoding="utf-8")


class Notifications:
    """What the server sent unasked; :meth:`wait_tools_changed` waits for a ``tools/list_changed``."""

    def __init__(self) -> None:
        self.seen: list[Any] = []
        self._changed = asyncio.Event()

    async def __call__(self, incoming: Any) -> None:
        self.seen.append(incoming)
        if isinstance(incoming, types.ToolListChangedNotification):
            self._changed.set()

    def tools_changed(self) -> bool:
        return self._changed.is_set()

    async def wait_tools_changed(self) -> None:
        await asyncio.wait_for(self._changed.wait(), timeout=30)


@contextlib.asynccontextmanager
async def connect(
    workspace: Path, env: dict[str, str], *, mode: str = "legacy", handler: Notifications | None = None
) -> AsyncIterator[Client]:
    params = StdioServerParameters(
        command=CLI, args=["mcp-serve", "--workspace", str(workspace), "--tools", "demo"], env=env, cwd=str(workspace)
    )
    async with Client(params, mode=mode, message_handler=handler, read_timeout_seconds=120) as client:  # type: ignore[arg-type]
        yield client


def text_of(result: types.CallToolResult) -> str:
    first = result.content[0]
    assert isinstance(first, types.TextContent)
    return first.text


@pytest.mark.asyncio
async def test_lists_the_code_mode_tools_with_the_bootstrap_and_the_catalog_in_instructions(
    workspace: Path, env: dict[str, str]
) -> None:
    async with connect(workspace, env) as client:
        listed = await client.list_tools()
        instructions = client.instructions or ""
    tools = {tool.name: tool for tool in listed.tools}
    assert list(tools) == ["run_code", "read_spill", "search_capabilities"]
    assert message("ptc.bootstrap", "en", tool="run_code") in (tools["run_code"].description or "")
    assert instructions.startswith("# Capability catalog for this session.")
    assert "async def convert_units(" in instructions  # full by default: its contract is in the catalog


@pytest.mark.asyncio
async def test_run_code_calls_a_host_tool_through_the_session(workspace: Path, env: dict[str, str]) -> None:
    async with connect(workspace, env) as client:
        result = await client.call_tool("run_code", {"description": "convert", "code": PROGRAM})
        direct = await client.call_tool("convert_units", {"value": 1, "from_unit": "km", "to_unit": "m"})
    assert result.is_error is False, text_of(result)
    body = orjson.loads(text_of(result))
    assert body["value"] == {"unit": "m", "value": 2000.0}
    assert body["calls"] == 1
    # A host tool the client was not offered is refused by the host, as for a model.
    assert direct.is_error is True
    assert "unknown-tool" in text_of(direct) or "convert_units" in text_of(direct)


@pytest.mark.asyncio
async def test_search_capabilities_finds_an_on_demand_tool(workspace: Path, env: dict[str, str]) -> None:
    write_config(workspace, {CONVERT: "on-demand"})
    async with connect(workspace, env) as client:
        instructions = client.instructions or ""
        found = await client.call_tool("search_capabilities", {"query": "convert units of length"})
        wrong = await client.call_tool("search_capabilities", {"query": 3})
        phrased = await client.call_tool("search_capabilities", {"query": ["jot down a note", "convert units"]})
        too_many = await client.call_tool("search_capabilities", {"query": ["convert"] * 9})
        ran = await client.call_tool("run_code", {"description": "convert", "code": PROGRAM})
    assert "async def convert_units(" not in instructions  # on demand: named at most, never its contract
    answer = orjson.loads(text_of(found))
    expanded = [item["identity"] for item in answer["expanded"]]
    assert expanded[0] == CONVERT
    assert "async def convert_units(" in answer["text"]
    assert wrong.is_error is True and "PTC-7103" in text_of(wrong)
    fused = orjson.loads(text_of(phrased))
    assert fused["query"] == ["jot down a note", "convert units"]
    assert CONVERT in [item["identity"] for item in (*fused["expanded"], *fused["not_expanded"])]
    assert too_many.is_error is True and "PTC-2008" in text_of(too_many)
    assert ran.is_error is False  # on demand stays callable from programs


@pytest.mark.asyncio
async def test_refresh_prompt_gives_the_receipt_then_tools_list_changed(workspace: Path, env: dict[str, str]) -> None:
    notifications = Notifications()
    async with connect(workspace, env, handler=notifications) as client:
        prompts = await client.list_prompts()
        shown = await client.get_prompt("capabilities")
        unchanged = await client.get_prompt("capabilities_refresh")
        await asyncio.sleep(0.2)
        quiet = not notifications.tools_changed()
        write_config(workspace, {CONVERT: "off"})
        applied = await client.get_prompt("capabilities_refresh")
        await notifications.wait_tools_changed()
        ran = await client.call_tool("run_code", {"description": "convert", "code": PROGRAM})
    assert [p.name for p in prompts.prompts] == ["capabilities", "capabilities_refresh"]
    assert _texts(shown)[0].startswith("Code mode is on")
    assert _receipt(unchanged)["status"] == "unchanged" and quiet
    assert _receipt(applied)["status"] == "applied"
    receipt, notice = _texts(applied)
    assert "convert_units" in receipt
    assert "convert_units" in notice  # what the model must read: it was turned off
    assert ran.is_error is True  # the new plan holds: the program no longer reaches it


@pytest.mark.asyncio
async def test_one_client_session_is_one_family_in_the_statistics(workspace: Path, env: dict[str, str]) -> None:
    write_config(workspace, {})  # management on: the workspace records statistics
    async with connect(workspace, env) as client:
        for _ in range(2):
            result = await client.call_tool("run_code", {"description": "convert", "code": PROGRAM})
            assert result.is_error is False
    store = orjson.loads((workspace / ".ptc-plus" / "statistics.json").read_bytes())
    assert len(store["families"]) == 1, store  # two calls, one client session: one family, revised


def _texts(result: types.GetPromptResult) -> list[str]:
    texts = []
    for msg in result.messages:
        assert isinstance(msg.content, types.TextContent)
        texts.append(msg.content.text)
    return texts


def _receipt(result: types.GetPromptResult) -> dict[str, Any]:
    meta: dict[str, Any] = result.meta or {}
    receipt: dict[str, Any] = meta["ptc-plus/receipt"]
    return receipt


@pytest.mark.asyncio
async def test_on_a_2026_connection_the_change_arrives_on_the_listen_stream(
    workspace: Path, env: dict[str, str]
) -> None:
    write_config(workspace, {})
    async with connect(workspace, env, mode="auto") as client:
        assert client.protocol_version in MODERN_PROTOCOL_VERSIONS
        before = [tool.name for tool in (await client.list_tools()).tools]
        async with client.listen(tools_list_changed=True) as subscription:
            write_config(workspace, {CONVERT: "off"})
            applied = await client.get_prompt("capabilities_refresh")
            event = await asyncio.wait_for(anext(aiter(subscription)), timeout=30)
        after = [tool.name for tool in (await client.list_tools()).tools]
    assert _receipt(applied)["status"] == "applied"
    assert isinstance(event, ToolsListChanged)
    # The names stay (convert_units was reached through run_code); the client re-lists and reads the notice.
    assert before == after == ["run_code", "read_spill", "search_capabilities"]


@pytest.mark.asyncio
async def test_a_large_result_is_previewed_and_its_rest_read_with_read_spill(
    workspace: Path, env: dict[str, str]
) -> None:
    big = "return '\\n'.join(f'line {i:05d}' for i in range(20000))"
    async with connect(workspace, env) as client:
        previewed = await client.call_tool("run_code", {"description": "big", "code": big})
        handle = re.search(r"spill-[0-9a-f]+", text_of(previewed))
        assert handle is not None, text_of(previewed)[:2000]
        rest = await client.call_tool("read_spill", {"handle": handle.group(0), "offset": 100000})
    assert len(text_of(previewed)) < 100000  # the model sees a preview, not 240 kB
    assert rest.is_error is False, text_of(rest)
    assert "line 0" in orjson.loads(text_of(rest))["text"]


@pytest.mark.asyncio
async def test_a_refresh_waiting_for_a_running_cell_applies_at_its_end(workspace: Path, env: dict[str, str]) -> None:
    notifications = Notifications()
    write_config(workspace, {})
    marker = workspace / "running"
    sleeper = f"import asyncio, pathlib\npathlib.Path({str(marker)!r}).touch()\nawait asyncio.sleep(2)\nreturn 'slept'"
    async with connect(workspace, env, handler=notifications) as client:
        cell = asyncio.create_task(client.call_tool("run_code", {"description": "sleep", "code": sleeper}))
        while not marker.exists():  # the cell is running once its program touched the marker
            await asyncio.sleep(0.05)
        write_config(workspace, {CONVERT: "off"})
        pending = await client.get_prompt("capabilities_refresh")
        waited = not notifications.tools_changed()
        ended = await cell
        await notifications.wait_tools_changed()
    assert _receipt(pending)["status"] == "pending" and waited
    assert ended.is_error is False
    owed = [block.text for block in ended.content[1:] if isinstance(block, types.TextContent)]
    assert any("convert_units" in text for text in owed), owed  # the notice comes with the cell's result
