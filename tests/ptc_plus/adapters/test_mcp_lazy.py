"""Servers start at their first need, are reused, and never while their unit is ``off`` (issue 29 item 1, ADR 0097).

A session plans from each server definition's ``tools/list`` snapshot: with one, nothing starts at session
start; a program's first call starts the server and later calls (in that program, another turn, another
session of the host) reuse it. A server whose unit ``mcp:<server>`` is ``off`` is never started, with or
without a snapshot, whatever a program tries and through a refresh. The fixture server appends a line to a
file each time it starts (``FIXTURE_STARTS``), so starts are counted, not timed.
"""

# ruff: noqa: F811 - the fixtures are imported from mcp_support (this directory has no conftest of its own)
from __future__ import annotations

from pathlib import Path

import pytest

from hookspecs.reference import AssistantTurn, RequestedCall, ScriptedModel
from ptc_plus.adapters.mcp import check_servers, default_store
from ptc_plus.config import Disclosure, load_config
from ptc_plus.plugin import controller
from tests.ptc_plus.session.conftest import HostFactory, entry_of, plan_of, program_turns, state_of, write_config

from .mcp_support import (  # noqa: F401 - fixtures
    configure,
    counted_table,
    isolated_env,
    mark,
    open_host,
    settled_values,
    starts_of,
    workspace,
)

TWO_CALLS = "first = await tools.add(a=1, b=2)\nsecond = await tools.add(a=3, b=4)\nreturn [first, second]\n"
CALL_OFF = (
    "try:\n"
    "    await tools.add(a=1, b=2)\n"
    "    got = 'called'\n"
    "except AttributeError as error:\n"
    "    got = str(error)\n"
    "return {'got': got, 'names': sorted(tools)}\n"
)


def _programs(*codes: str) -> ScriptedModel:
    turns: list[AssistantTurn] = []
    for code in codes:
        call = RequestedCall(tool="run_code", arguments={"description": "test", "code": code})
        turns += [AssistantTurn(tool_calls=(call,)), AssistantTurn(text="done")]
    return ScriptedModel(turns)


@pytest.mark.asyncio
async def test_with_a_snapshot_the_session_starts_no_server_and_the_first_call_starts_it_once(
    open_host: HostFactory, workspace: Path, tmp_path: Path, mark: str
) -> None:
    starts = tmp_path / "starts"
    configure(tmp_path, counted_table(mark, starts))
    write_config(workspace, budget=100_000)
    assert check_servers(load_config(workspace), workspace) == {"fixture": None}  # lists it: the snapshot
    assert starts_of(starts) == 1
    host = await open_host()
    session = await host.start_session(title="t", model=_programs(TWO_CALLS, "return await tools.add(a=5, b=5)"))
    assert starts_of(starts) == 1  # planned from the snapshot: nothing started
    assert entry_of(plan_of(host, session), "mcp:fixture/add").disclosure is Disclosure.FULL
    await session.run_turn("go")
    assert settled_values(session) == [{"total": 3}, {"total": 7}]  # type: ignore[comparison-overlap]
    assert starts_of(starts) == 2  # the first call started it; the second reused it
    await session.run_turn("again")
    assert settled_values(session) == {"total": 10}  # type: ignore[comparison-overlap]
    other = await host.start_session(title="u", model=program_turns("return await tools.add(a=2, b=2)"))
    await other.run_turn("go")
    assert settled_values(other) == {"total": 4}  # type: ignore[comparison-overlap]
    assert starts_of(starts) == 2  # another turn and another session reuse the running server


@pytest.mark.asyncio
async def test_without_a_snapshot_the_session_start_lists_the_server_once_and_files_its_snapshot(
    open_host: HostFactory, workspace: Path, tmp_path: Path, mark: str
) -> None:
    starts = tmp_path / "starts"
    configure(tmp_path, counted_table(mark, starts))
    write_config(workspace, budget=100_000)
    store = default_store()
    assert not store.directory.exists()
    host = await open_host()
    session = await host.start_session(title="t", model=program_turns("return await tools.add(a=1, b=1)"))
    assert starts_of(starts) == 1
    assert entry_of(plan_of(host, session), "mcp:fixture/add").disclosure is Disclosure.FULL
    files = sorted(store.directory.glob("*.json"))
    assert len(files) == 1
    snapshot = store.load(files[0].stem, "fixture")
    assert snapshot is not None and "add" in {tool["name"] for tool in snapshot.tools}
    await session.run_turn("go")
    assert settled_values(session) == {"total": 2}  # type: ignore[comparison-overlap]
    assert starts_of(starts) == 1  # the listing's connection serves the call


@pytest.mark.asyncio
@pytest.mark.parametrize("listed_before", [True, False], ids=["with-snapshot", "without-snapshot"])
async def test_an_off_server_is_never_started_not_at_start_nor_by_a_program_nor_by_a_refresh(
    open_host: HostFactory, workspace: Path, tmp_path: Path, mark: str, listed_before: bool
) -> None:
    starts = tmp_path / "starts"
    configure(tmp_path, counted_table(mark, starts))
    if listed_before:
        write_config(workspace, budget=100_000)
        assert check_servers(load_config(workspace), workspace) == {"fixture": None}
    before = starts_of(starts)
    write_config(workspace, budget=100_000, choices={"mcp:fixture": "off"})
    host = await open_host()
    session = await host.start_session(title="t", model=program_turns(CALL_OFF))
    await session.run_turn("go")
    value = settled_values(session)
    assert "add" not in value["names"]  # type: ignore[operator]
    if listed_before:  # the snapshot names its tools: the plan holds them, off, and the program is told so
        assert entry_of(plan_of(host, session), "mcp:fixture/add").disclosure is Disclosure.OFF
        assert "tools.add is off in this session's capability plan" in str(value["got"])
    else:  # never listed: nothing is known of it, not even that it is off
        assert "No tool named 'add'" in str(value["got"])
    receipt = controller(host.services).refresh(session.agent)
    assert receipt.status in ("applied", "unchanged"), receipt.text
    assert starts_of(starts) == before  # nothing of this session started it
    assert not [d for d in state_of(host, session).diagnostics if "PTC-70" in d]
