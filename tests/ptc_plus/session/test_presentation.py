"""Presentations ``both`` and ``native`` are configurable, not only an automatic fallback."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hookspecs.reference import AssistantTurn, ReferenceHost, RequestedCall, ScriptedModel
from ptc_plus.config import Presentation
from ptc_plus.session.projection import CATALOG_PROVENANCE

from .conftest import HostFactory, state_of, write_config

BOTH = '\n[runtime]\npresentation = "both"\n'
NATIVE = '\n[runtime]\npresentation = "native"\n'


def direct(tool: str, **arguments: Any) -> AssistantTurn:
    return AssistantTurn(tool_calls=(RequestedCall(tool=tool, arguments=arguments),))


def settled(session: Any, tool: str) -> dict[str, Any]:
    (found,) = [
        e.data["result"] for e in session.log.events if e.type == "tool-settled" and e.data["result"]["tool"] == tool
    ]
    return dict(found)


@pytest.mark.usefixtures("unconfined")
@pytest.mark.asyncio
async def test_both_offers_full_tools_directly_besides_run_code(open_host: HostFactory, workspace: Path) -> None:
    write_config(workspace, choices={"host:read_file": "full", "host:notes_search": "on-demand"}, extra=BOTH)
    host = await open_host()
    model = ScriptedModel(
        [direct("read_file", path="docs/routes.md"), direct("notes_search", query="hill"), AssistantTurn(text="ok")]
    )
    session = await host.start_session(title="t", model=model)
    state = state_of(host, session)
    assert state is not None and state.ptc and state.presentation is Presentation.BOTH
    await session.run_turn("go")
    first = model.requests[0]
    # run_code (and read_spill) stay; the one full tool is also a native function tool; on-demand ones are not.
    assert sorted(t.name for t in first.tools) == ["read_file", "read_spill", "run_code"]
    assert "run_code" in first.system  # the code-mode bootstrap is there
    assert [m for m in first.messages if "async def read_file(" in str(m["content"])]  # and the catalog
    assert settled(session, "read_file")["status"] == "ok"  # a direct call to a full tool runs
    refused = settled(session, "notes_search")  # a direct call to an on-demand tool is not offered
    assert refused["status"] != "ok"
    lines = session.command("/capabilities").text.splitlines()
    assert "presentation both" in lines[0] and "read_file" in lines[0]
    assert "[runtime] presentation" in lines[1]


@pytest.mark.usefixtures("unconfined")
@pytest.mark.asyncio
async def test_both_with_management_off_offers_every_tool_and_run_code(open_host: HostFactory, workspace: Path) -> None:
    write_config(workspace, enabled=False, extra=BOTH)
    host = await open_host()
    model = ScriptedModel([AssistantTurn(text="ok")])
    session = await host.start_session(title="t", model=model)
    await session.run_turn("go")
    names = [t.name for t in model.requests[0].tools]
    assert names == [*(s.name for s in host.view(session.agent).specs())]  # host order, run_code included
    assert "run_code" in names and "notes_search" in names


async def native_request(host: ReferenceHost) -> Any:
    model = ScriptedModel([AssistantTurn(text="ok")])
    session = await host.start_session(title="t", model=model)
    await session.run_turn("hi")
    return session, model.requests[0]


@pytest.mark.asyncio
async def test_native_is_configurable_and_injects_nothing(open_host: HostFactory, workspace: Path) -> None:
    write_config(workspace, choices={"host:notes_search": "off"}, extra=NATIVE)
    _, expected = await native_request(await open_host(plugins=[]))
    host = await open_host()
    session, sent = await native_request(host)
    state = state_of(host, session)
    assert state is not None and not state.ptc and state.presentation is Presentation.NATIVE
    assert "run_code" not in host.view(session.agent).names()
    assert sent.system == expected.system  # no bootstrap
    assert sent.tools == expected.tools  # every tool native, no run_code
    assert sent.messages == expected.messages  # no catalog message
    assert not [e for e in session.surface.entries if e.provenance == CATALOG_PROVENANCE]
    first = session.command("/capabilities").text.splitlines()[0]
    assert "native" in first and "[runtime] presentation" in first
