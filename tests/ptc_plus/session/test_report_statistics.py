"""``/capabilities`` shows the statistics behind each choice; new statistics never reshuffle a live or resumed plan."""

from __future__ import annotations

from pathlib import Path

import pytest

from hookspecs.reference import AssistantTurn, ScriptedModel
from ptc_plus.config import Disclosure
from ptc_plus.statistics import workspace_store
from tests.statistics_samples import record_families

from .conftest import EVIDENCE_BUDGET, HostFactory, entry_of, environment_of, write_config

CONVERTER, READER = "host:convert_units", "host:read_file"
STATISTICS = "\n[statistics]\nmin_samples = 3\nwindow = 10\n"


@pytest.mark.asyncio
async def test_capabilities_shows_coverage_samples_scope_and_window(open_host: HostFactory, workspace: Path) -> None:
    write_config(workspace, budget=EVIDENCE_BUDGET, baseline=[READER], extra=STATISTICS)
    record_families(workspace_store(workspace.resolve()), workspace.resolve(), ["f1", "f2", "f3"], [CONVERTER])
    host = await open_host()
    session = await host.start_session(title="t")
    receipt = session.command("/capabilities")
    text = receipt.text
    assert "statistics usable" in text
    assert "host:convert_units [full]: workspace statistics: used in 3 of 3 families (100%), window 10" in text
    assert (
        "host:read_file [on-demand]: workspace statistics: used in 0 of 3 families (0%), window 10: "
        "coverage below the threshold for full"
    ) in text
    entries = {e["identity"]: e for e in receipt.data["environment"]["plan"]["entries"]}
    converter = entries[CONVERTER]
    assert (converter["coverage"], converter["samples"], converter["scope"], converter["window"]) == (
        1.0,
        3,
        "workspace",
        10,
    )


@pytest.mark.asyncio
async def test_capabilities_names_a_damaged_store(open_host: HostFactory, workspace: Path) -> None:
    write_config(workspace, baseline=[READER], extra=STATISTICS)
    path = workspace_store(workspace.resolve()).path
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b'{"version": 42}')
    host = await open_host()
    session = await host.start_session(title="t")
    text = session.command("/capabilities").text
    assert "Statistics store: PTC-5003: " in text
    assert "statistics unreadable: a statistics store is damaged or from a newer release" in text
    assert "  host:read_file [full]: in the manual baseline (rank 1)" in text.splitlines()


@pytest.mark.asyncio
async def test_live_and_resumed_sessions_keep_their_plan_while_statistics_grow(
    open_host: HostFactory, workspace: Path
) -> None:
    write_config(workspace, budget=EVIDENCE_BUDGET, extra=STATISTICS)
    host = await open_host()
    session = await host.start_session(title="t", model=ScriptedModel([AssistantTurn(text="ok")]))
    before = environment_of(host, session).to_bytes()
    assert entry_of(environment_of(host, session).plan, CONVERTER).disclosure is Disclosure.ON_DEMAND
    record_families(workspace_store(workspace.resolve()), workspace.resolve(), ["f1", "f2", "f3", "f4"], [CONVERTER])
    await session.run_turn("hi")  # the live session works on after the store changed
    assert environment_of(host, session).to_bytes() == before  # live: frozen
    session_id = session.agent.session_id
    await host.aclose()
    resumed_host = await open_host()
    resumed = await resumed_host.resume_session(session_id)
    assert environment_of(resumed_host, resumed).to_bytes() == before  # resumed: frozen
    # The control: a new session does follow the statistics.
    fresh = await resumed_host.start_session(title="t")
    assert entry_of(environment_of(resumed_host, fresh).plan, CONVERTER).disclosure is Disclosure.FULL
