"""A server is a unit: ``mcp:<server>`` off closes its tools and resources in every projection, while a
per-tool setting under it is kept and applies again when the server is back on (ADR 0071, ADR 0072).

Two servers run the same fixture script: ``fixture`` (turned off) and ``other``, whose tools share the
fixture's names and are left out (PTC-7006) while its resource source stays — so the resource readers exist
and the guard's refusal of ``fixture`` by argument is what is tested. A server that is ``off`` is never
started (ADR 0097): its tools reach the plan (as ``off``) from the snapshot an earlier check listed.
"""

# ruff: noqa: F811 - the fixtures are imported from mcp_support (this directory has no conftest of its own)
from __future__ import annotations

from pathlib import Path

import pytest

from ptc_plus.adapters.mcp import check_servers
from ptc_plus.config import Disclosure, load_config
from ptc_plus.plugin import controller
from tests.ptc_plus.session.conftest import HostFactory, entry_of, plan_of, program_turns, state_of, write_config

from .mcp_support import configure, fixture_table, isolated_env, mark, open_host, settled_values, workspace  # noqa: F401 - fixtures

PROBE = """
names = sorted(tools)
try:
    await resources.read("fixture://readme", server="fixture")
    guarded = None
except ToolCallError as error:
    guarded = error.message
unnamed = await resources.read("fixture://readme")
found = await capabilities.search("add two integers fixture")
return {"names": names, "guarded": guarded, "unnamed": unnamed["server"], "found": str(found)}
"""


@pytest.mark.asyncio
async def test_a_server_turned_off_leaves_every_projection_and_a_tool_setting_under_it_survives(
    open_host: HostFactory, workspace: Path, tmp_path: Path, mark: str
) -> None:
    configure(tmp_path, fixture_table(mark), fixture_table(mark, name="other"))
    write_config(workspace, budget=100_000, choices={"mcp:fixture/add": "full"})
    assert check_servers(load_config(workspace), workspace) == {"fixture": None, "other": None}  # the snapshots
    write_config(workspace, budget=100_000, choices={"mcp:fixture": "off", "mcp:fixture/add": "full"})
    host = await open_host()
    session = await host.start_session(title="t", model=program_turns(PROBE))
    await session.run_turn("go")
    value = settled_values(session)
    assert not {"add", "describe", "pid"} & set(value["names"])  # type: ignore[arg-type]
    assert "capability-off" in str(value["guarded"]) and "mcp-resources:fixture" in str(value["guarded"])
    assert value["unnamed"] == "other"  # an unnamed read only looks where the plan lets it
    assert "mcp:fixture" not in str(value["found"])
    catalog = [e for e in session.surface.entries if e.provenance == "ptc-plus:catalog"]
    assert catalog and "mcp:fixture" not in catalog[0].message["content"]
    assert "MCP server other" in catalog[0].message["content"]  # its resource source, on demand
    assert "add" not in [s.name for s in session.model_tools()]
    plan = plan_of(host, session)
    assert entry_of(plan, "mcp:fixture/add").disclosure is Disclosure.OFF
    assert entry_of(plan, "mcp-resources:fixture").disclosure is Disclosure.OFF
    assert entry_of(plan, "mcp-resources:other").disclosure is not Disclosure.OFF
    left_out = [d for d in state_of(host, session).diagnostics if "PTC-7006" in d or "mcp:other/add" in d]
    assert left_out, state_of(host, session).diagnostics

    write_config(workspace, budget=100_000, choices={"mcp:fixture/add": "full"})  # the server is back on
    receipt = controller(host.services).refresh(session.agent)
    assert receipt.status == "applied", receipt.text
    plan = plan_of(host, session)
    assert entry_of(plan, "mcp:fixture/add").disclosure is Disclosure.FULL  # its own setting applies again
    assert entry_of(plan, "mcp-resources:fixture").disclosure is not Disclosure.OFF
    result = await session.call_tool("add", {"a": 1, "b": 1})
    assert result.error is None


@pytest.mark.asyncio
async def test_a_server_added_after_the_session_started_arrives_with_one_refresh(
    open_host: HostFactory, workspace: Path, tmp_path: Path, mark: str
) -> None:
    configure(tmp_path)
    write_config(workspace, budget=100_000)
    host = await open_host()
    session = await host.start_session(title="t", model=program_turns("return 1"))
    await session.run_turn("go")  # the view the host built for this step knows no MCP server

    configure(tmp_path, fixture_table(mark))
    receipt = session.command("/capabilities refresh")  # a slash command sees the tools of right now
    assert receipt.status == "applied", receipt.text
    assert "mcp:fixture/add" in receipt.text
    assert entry_of(plan_of(host, session), "mcp:fixture/add").disclosure is not Disclosure.OFF
