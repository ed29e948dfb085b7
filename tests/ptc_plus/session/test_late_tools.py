"""A managed tool the host adds after the plan froze is absent from every projection until refresh (ADR 0056).

One test per projection: the guard, the natively offered tools, the program's
``tools`` namespace, the catalog message, discovery and ``/capabilities`` —
and the same after a resume, which rebuilds the membership on the same path.
Also here: the membership is one value, built once (discovery's index and its
contract costs come from it and from the plan), and a skill the plan turns off
stays unloadable whatever the host's loader is called (contract 1.1, ADR 0055).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hookspecs import JSONObject, JSONValue, ToolContext, ToolDefinition, tool
from hookspecs.reference import ReferenceHost
from ptc_plus.discovery.api import find
from ptc_plus.plugin import controller

from .conftest import HostFactory, program_turns, write_config, write_skill

pytestmark = pytest.mark.usefixtures("unconfined")

LATE = "late_lookup"


def late_tool() -> ToolDefinition:
    @tool(LATE, description="Look up a late fact.", input_schema={"type": "object", "properties": {}})
    async def lookup(arguments: JSONObject, context: ToolContext) -> JSONValue:
        return {"late": True}

    return lookup


async def started(open_host: HostFactory, workspace: Path, **kwargs: Any) -> tuple[ReferenceHost, Any]:
    write_config(workspace, budget=100_000)
    host = await open_host(**kwargs)
    session = await host.start_session(title="t", model=program_turns("return sorted(dir(tools))"))
    host.add_tool(late_tool())  # after the plan and its membership froze
    return host, session


@pytest.mark.asyncio
async def test_the_guard_refuses_a_late_tool(open_host: HostFactory, workspace: Path) -> None:
    host, session = await started(open_host, workspace)
    assert LATE in host.view(session.agent).names()  # the host offers it...
    result = await session.call_tool(LATE, {})
    assert result.error is not None and result.error.code == "refused" and not result.dispatched
    assert "capability-off" in result.error.message  # ...the plan does not, until refresh
    # It is not "off" in the plan: the plan never had it, and the refusal says so (issue 26).
    assert "is not in this session's capability plan" in result.error.message, result.error.message
    assert "added it after the plan froze" in result.error.message and "is off" not in result.error.message


@pytest.mark.asyncio
async def test_a_late_tool_is_not_offered_natively(open_host: HostFactory, workspace: Path) -> None:
    _host, session = await started(open_host, workspace)
    assert LATE not in [s.name for s in session.model_tools()]
    assert "run_code" in [s.name for s in session.model_tools()]


@pytest.mark.asyncio
async def test_a_late_tool_is_not_in_the_program_namespace(open_host: HostFactory, workspace: Path) -> None:
    _host, session = await started(open_host, workspace)
    await session.run_turn("go")
    settled = [e.data["result"] for e in session.log.events if e.type == "tool-settled"]
    names = next(r for r in settled if r["tool"] == "run_code")["value"]["value"]
    assert "read_file" in names and LATE not in names


@pytest.mark.asyncio
async def test_a_late_tool_is_not_in_the_catalog_message(open_host: HostFactory, workspace: Path) -> None:
    _host, session = await started(open_host, workspace)
    await session.run_turn("go")
    catalog = [e for e in session.surface.entries if e.provenance == "ptc-plus:catalog"]
    assert catalog and all(LATE not in e.message["content"] for e in catalog)
    assert "read_file" in catalog[0].message["content"]


@pytest.mark.asyncio
async def test_discovery_does_not_find_a_late_tool(open_host: HostFactory, workspace: Path) -> None:
    host, session = await started(open_host, workspace)
    snapshot = controller(host.services).discovery(session.agent)
    assert snapshot is not None and snapshot.get(f"host:{LATE}") is None
    assert f"host:{LATE}" not in {m["identity"] for m in find(snapshot, LATE)["matches"]}


@pytest.mark.asyncio
async def test_capabilities_names_a_late_tool_as_not_offered(open_host: HostFactory, workspace: Path) -> None:
    _host, session = await started(open_host, workspace)
    receipt = session.command("/capabilities")
    assert receipt.data["presentation"]["late"] == [LATE]
    assert f"not offered until refresh: {LATE}" in receipt.text


@pytest.mark.asyncio
async def test_a_native_session_does_not_call_a_late_tool_withheld(open_host: HostFactory, workspace: Path) -> None:
    # Natively the host's own provision applies: a late tool is offered and callable, so /capabilities
    # must not claim it is withheld until refresh.
    write_config(workspace, budget=100_000, extra='\n[runtime]\npresentation = "native"\n')
    host = await open_host()
    session = await host.start_session(title="t", model=program_turns("return 1"))
    host.add_tool(late_tool())
    assert LATE in [s.name for s in session.model_tools()]
    receipt = session.command("/capabilities")
    assert receipt.data["presentation"]["late"] == []
    assert "not offered until refresh" not in receipt.text


@pytest.mark.asyncio
async def test_resume_keeps_a_late_tool_out_everywhere(open_host: HostFactory, workspace: Path) -> None:
    host, session = await started(open_host, workspace)
    session_id = session.agent.session_id
    await host.aclose()
    again = await open_host(tools=[*host._host_tools])  # the same host tools, the late one included
    resumed = await again.resume_session(session_id)
    assert LATE in again.view(resumed.agent).names()
    assert LATE not in [s.name for s in resumed.model_tools()]
    assert resumed.command("/capabilities").data["presentation"]["late"] == [LATE]
    refused = await resumed.call_tool(LATE, {})
    assert refused.error is not None and refused.error.code == "refused"


@pytest.mark.asyncio
async def test_the_membership_is_one_value_built_once(open_host: HostFactory, workspace: Path) -> None:
    host, session = await started(open_host, workspace)
    ctl = controller(host.services)
    state = ctl.session(session.agent)
    assert state is not None and state.membership is not None and state.environment is not None
    snapshot = ctl.discovery(session.agent)
    assert snapshot is state.membership.snapshot is ctl.discovery(session.agent)  # built once, held in the state
    # Contract costs are the plan's own measurements, not measured again.
    plan_costs = {e.identity: e.cost_tokens for e in state.environment.plan.effective()}
    assert snapshot is not None and dict(snapshot.costs) == plan_costs


@pytest.mark.asyncio
async def test_an_off_skill_cannot_load_through_a_loader_of_another_name(
    open_host: HostFactory, workspace: Path, tmp_path: Path
) -> None:
    skills = tmp_path / "skills"
    write_skill(skills, "pdf", "Fill PDF forms.")
    write_skill(skills, "charts", "Draw charts.")
    write_config(workspace, budget=100_000, choices={"skill:pdf": "off", "skill:charts": "full"})
    host = await open_host(skills_dirs=[skills], skill_loader="open_skill")
    session = await host.start_session(title="t")
    assert {s.loader for s in host.services.skills(session.agent)} == {"open_skill"}
    refused = await session.call_tool("open_skill", {"name": "pdf"})
    assert refused.error is not None and refused.error.code == "refused" and "capability-off" in refused.error.message
    loaded = await session.call_tool("open_skill", {"name": "charts"})
    assert loaded.ok and loaded.value["body"] == "Body of charts."
    unknown = await session.call_tool("open_skill", {"name": "nope"})
    assert unknown.error is not None and unknown.error.code == "unknown-skill"  # the host's own answer
