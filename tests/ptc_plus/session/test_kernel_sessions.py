"""The REPL kernel in a real plugin session: the journal lives in the session's records, survives a
host restart (resume), and compaction drops what hidden cells declared (ADR 0081)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hookspecs.reference import ScriptedModel
from ptc_plus.session.repl_journal import KIND

from .conftest import HostFactory, write_config
from .test_expansions import cell, results, said

KERNEL = '\n[runtime]\nkernel = "session"\n'


def _values(session: object) -> list[object]:
    return [r.get("value", {}).get("value") if isinstance(r, dict) else None for r in results(session)]  # type: ignore[arg-type]


@pytest.mark.asyncio
async def test_names_survive_a_host_restart_without_running_a_tool_again(
    open_host: HostFactory, workspace: Path, unconfined: Path
) -> None:
    write_config(workspace, extra=KERNEL)
    host = await open_host()
    add = "n = await tools.notes_add(title='t', body='b')\nx = 40"
    session = await host.start_session(title="t", model=ScriptedModel([cell(add), said("stored")]))
    await session.run_turn("remember")
    session_id = session.agent.session_id
    journal = [r for r in host.services.read_records(session.agent) if r.kind == KIND]
    assert [r.payload["type"] for r in journal] == ["entered", "settled"]
    await host.aclose()

    again = await open_host()
    resumed = await again.resume_session(session_id, model=ScriptedModel([cell("return [x, n['id']]"), said("ok")]))
    await resumed.run_turn("recall")
    assert [40, 1] in _values(resumed)
    listed = await resumed.call_tool("notes_search", {"query": "b"})
    assert listed.ok and len(listed.value) == 1  # notes_add ran once, not again during replay


@pytest.mark.asyncio
async def test_compaction_drops_what_the_hidden_cell_declared(
    open_host: HostFactory, workspace: Path, unconfined: Path
) -> None:
    write_config(workspace, extra=KERNEL)
    host = await open_host()
    model = ScriptedModel(
        [cell("x = 1"), said("1"), cell("y = 2"), said("2"), cell("return [('x' in globals()), y]"), said("3")]
    )
    session = await host.start_session(title="t", model=model)
    await session.run_turn("define x")
    await session.run_turn("define y")
    session.compact()  # keeps the latest turn only: the cell that defined x leaves the surface
    await session.run_turn("check")
    assert [False, 2] in _values(session)
    last = results(session)[-1]
    assert any("PTC-R003" in entry["text"] and "x" in entry["text"] for entry in last["value"]["logs"])


@pytest.mark.asyncio
async def test_a_held_reference_to_a_tool_a_refresh_turned_off_names_the_refresh(
    open_host: HostFactory, workspace: Path, unconfined: Path
) -> None:
    write_config(workspace, extra=KERNEL)
    host = await open_host()
    held = "t = tools.convert_units\nreturn 'held'"
    call = (
        "try:\n    await t(value=1, from_unit='km', to_unit='m')\n"
        "except ToolCallError as error:\n    return [error.code, str(error)]"
    )
    session = await host.start_session(title="t", model=ScriptedModel([cell(held), said("1"), cell(call), said("2")]))
    await session.run_turn("hold it")
    write_config(workspace, choices={"host:convert_units": "off"}, extra=KERNEL)
    receipt = session.command("/capabilities refresh")
    assert receipt.status.value == "applied", receipt.text
    await session.run_turn("call it")
    code, text = _values(session)[-1]  # type: ignore[misc]
    assert code == "tool-unavailable"
    # The worker refuses it without asking the host, and still says why: the refresh that turned it off.
    assert "turned off by capability refresh #1" in text, text
