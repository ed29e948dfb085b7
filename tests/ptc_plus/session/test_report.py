"""``/capabilities``: a read-only view of the session's frozen plan."""

from __future__ import annotations

from pathlib import Path

import pytest

from hookspecs import CommandRequest, ReceiptStatus
from hookspecs.reference import ScriptedModel
from ptc_plus.plugin import controller

from .conftest import EVIDENCE_BUDGET, HostFactory, environment_of, write_config


@pytest.mark.asyncio
async def test_capabilities_shows_plan_reasons_budget_and_statistics(open_host: HostFactory, workspace: Path) -> None:
    write_config(workspace, budget=EVIDENCE_BUDGET, baseline=["host:read_file"], choices={"host:write_file": "off"})
    host = await open_host()
    assert "capabilities" in [c.name for c in host.command_table()]
    model = ScriptedModel([])
    session = await host.start_session(title="t", model=model)
    receipt = session.command("/capabilities")
    assert receipt.status is ReceiptStatus.SHOWN
    lines = receipt.text.splitlines()
    assert lines[0].startswith("Code mode is on (presentation ptc)")
    assert lines[1].startswith("Presentation: ptc configured") and "when the session started" in lines[1]
    assert "management on" in lines[2] and "1 full" in lines[2] and "1 off" in lines[2]
    assert "unavailable: no statistics store yet" in lines[2]
    assert lines[3].startswith("Default contracts: ") and f"of {EVIDENCE_BUDGET} " in lines[3]
    assert "  host:read_file [full]: in the manual baseline (rank 1)" in lines
    assert "  host:write_file [off]: explicit choice in the config" in lines
    assert "  host:convert_units [on-demand]: no sufficient statistics and not in the baseline" in lines
    assert model.requests == []  # no model request


@pytest.mark.asyncio
async def test_capabilities_never_refreshes(open_host: HostFactory, workspace: Path) -> None:
    write_config(workspace, choices={"host:write_file": "off"})
    host = await open_host()
    session = await host.start_session(title="t")
    before = environment_of(host, session).to_bytes()
    write_config(workspace, choices={"host:write_file": "full"})
    session.command("/capabilities")
    after = environment_of(host, session).to_bytes()
    assert after == before
    assert "host:write_file [off]" in session.command("/capabilities").text


@pytest.mark.asyncio
async def test_other_commands_are_not_ours(open_host: HostFactory, workspace: Path) -> None:
    host = await open_host()
    session = await host.start_session(title="t")
    assert session.command("/tools").status is ReceiptStatus.SHOWN
    assert controller(host.services).command(CommandRequest(name="tools", args=(), agent=session.agent)) is None


@pytest.mark.asyncio
async def test_config_problems_and_the_statistics_fallback_are_reported(
    open_host: HostFactory, workspace: Path
) -> None:
    write_config(workspace, choices={"host:write_file": "off"}, extra='\n[statistics]\nwindow = "many"\n')
    host = await open_host()
    session = await host.start_session(title="t")
    text = session.command("/capabilities").text
    assert "Config: " in text and "statistics.window" in text
    # A bad [statistics] only switches statistics off, and says why (not "disabled by the config")...
    assert "statistics off until the config problems are fixed" in text and "disabled by the config" not in text
    assert "host:write_file [off]: explicit choice in the config" in text  # ...valid manual choices still count
