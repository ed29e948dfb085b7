"""Contracts a program looked up reach the model once, as an expansion message (ADR 0070).

Sessions run on the reference host with a scripted model; every committed
context message is a ``context-message`` event in the session's log, so
"sent once" is counted there.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hookspecs.reference import AssistantTurn, ModelRequest, RequestedCall, ScriptedModel, Session
from ptc_plus.session.contract_memory import EXPANDED_KIND, EXPANSION_PROVENANCE

from .conftest import HostFactory, state_of, write_config

SEARCH = "found = await capabilities.search('convert units')\nreturn [e['identity'] for e in found['expanded']]"
INSPECT = "found = await capabilities.inspect(['convert_units'])\nreturn [e['identity'] for e in found['expanded']]"
USE = "return await tools.convert_units(value=2, from_unit='km', to_unit='m')"
CONVERT = "host:convert_units"


def cell(code: str) -> AssistantTurn:
    return AssistantTurn(tool_calls=(RequestedCall(tool="run_code", arguments={"description": "cell", "code": code}),))


def said(text: str = "ok") -> AssistantTurn:
    return AssistantTurn(text=text)


def committed(session: Session, prefix: str) -> list[dict[str, Any]]:
    """Context messages the host committed under a provenance starting with ``prefix`` (raw log, in order)."""
    return [
        e.data for e in session.log.events if e.type == "context-message" and e.data["provenance"].startswith(prefix)
    ]


def system_texts(request: ModelRequest) -> list[str]:
    return [str(m["content"]) for m in request.messages if m["role"] == "system"]


def results(session: Session) -> list[dict[str, Any]]:
    return [e.data["result"] for e in session.log.events if e.type == "tool-settled" and e.data.get("top_level")]


def contract_of(host: Any, session: Session, identity: str) -> str:
    state = state_of(host, session)
    capability = state.catalog.get(identity)
    assert capability is not None
    return capability.contract.strip()


@pytest.mark.asyncio
async def test_searched_in_cell_1_called_directly_in_cell_2_expansion_sent_once(
    open_host: HostFactory, workspace: Path, unconfined: Path
) -> None:
    write_config(workspace)  # nothing in full: convert_units is on demand
    host = await open_host()
    model = ScriptedModel([cell(SEARCH), cell(USE), said("done"), cell(SEARCH), said("again")])
    session = await host.start_session(title="t", model=model)
    await session.run_turn("convert 2 km")
    await session.run_turn("search once more")

    first, second, *_ = results(session)
    assert first["status"] == "ok" and CONVERT in first["value"]["value"]
    assert second["status"] == "ok" and second["value"]["value"] == {"value": 2000.0, "unit": "m"}
    assert second["value"]["calls"] == 1  # cell 2 called the tool directly, no second search
    (expansion,) = committed(session, EXPANSION_PROVENANCE)  # once, although cell 4 searched again
    assert expansion["provenance"] == f"{EXPANSION_PROVENANCE}:1"
    assert (expansion["turn"], expansion["step"]) == (1, 2)  # the step right after the search
    contract = contract_of(host, session, CONVERT)
    assert contract in expansion["text"]
    # The model saw it from the step after the search on, and still sees it in the next turn.
    assert not any(contract in t for t in system_texts(model.requests[0]))
    assert any(contract in t for t in system_texts(model.requests[1]))
    assert any(contract in t for t in system_texts(model.requests[3]))
    (record,) = [r for r in host.services.read_records(session.agent) if r.kind == EXPANDED_KIND]
    assert CONVERT in record.payload["shown"]


@pytest.mark.asyncio
async def test_the_catalogs_full_contracts_are_never_expanded_again(
    open_host: HostFactory, workspace: Path, unconfined: Path
) -> None:
    write_config(workspace, choices={CONVERT: "full"})
    host = await open_host()
    model = ScriptedModel([cell(INSPECT), said("done")])
    session = await host.start_session(title="t", model=model)
    await session.run_turn("look it up")
    assert results(session)[0]["value"]["value"] == [CONVERT]  # the program got the contract
    assert committed(session, EXPANSION_PROVENANCE) == []  # the model already has it in the catalog


@pytest.mark.asyncio
async def test_an_expansion_over_the_discovery_budget_is_named_not_cut(
    open_host: HostFactory, workspace: Path, unconfined: Path
) -> None:
    """The program asked for a larger answer than the expansion budget: what does not fit is named, never cut."""
    four = ("host:convert_units", "host:list_files", "host:read_file", "host:search_files")
    names = [i.removeprefix("host:") for i in four]
    code = f"found = await capabilities.inspect({names!r}, budget=5000)\nreturn len(found['expanded'])"
    write_config(workspace, extra="\n[context]\ndiscovery_tokens = 400\n")
    host = await open_host()
    session = await host.start_session(title="t", model=ScriptedModel([cell(code), said("done")]))
    await session.run_turn("look up four")
    assert results(session)[0]["value"]["value"] == 4
    (expansion,) = committed(session, EXPANSION_PROVENANCE)
    state = state_of(host, session)
    assert state.membership is not None and state.membership.snapshot is not None
    assert state.membership.snapshot.counter.count(expansion["text"]) <= 400
    shown = [i for i in four if f"async def {i.removeprefix('host:')}(" in expansion["text"]]
    left = [i.removeprefix("host:") for i in four if i not in shown]
    assert shown and left
    named = expansion["text"].rstrip("\n").rsplit("\n", 1)[-1]
    assert named.startswith("# Also looked up") and named.endswith(", ".join(left))
