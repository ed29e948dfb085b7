"""Full vs on-demand vs off on one capability, through the real reference host and a real run_code program.

``on-demand`` is callable and findable but its contract is not delivered up
front; ``off`` is absent from the SDK text (catalog message), discovery,
the program's ``tools`` namespace and the native tools — not a placeholder.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs
import pytest

from hookspecs import ToolCall
from hookspecs.reference import AssistantTurn, ReferenceHost, RequestedCall, ScriptedModel
from ptc_plus.config import Disclosure
from ptc_plus.discovery.api import find, search
from ptc_plus.plan import Reason
from ptc_plus.plugin import controller

from .conftest import (
    HostFactory,
    entry_of,
    plan_of,
    program_turns,
    state_of,
    write_config,
    write_skill,
    write_user_config,
)

# Membership does not depend on confinement: these run unconfined (user-level policy) everywhere,
# and once under the default confined policy where bubblewrap exists.
pytestmark = pytest.mark.usefixtures("unconfined")

TARGET = "host:notes_search"
PROGRAM = """\
names = sorted(dir(tools))
found = None
if "notes_search" in tools:
    found = await tools.notes_search(query="")
else:
    try:
        tools.notes_search
    except AttributeError as error:
        found = "missing: " + str(error)[:200]
return {"names": names, "found": found}
"""


async def run_with(
    open_host: HostFactory, workspace: Path, disclosure: str
) -> tuple[ReferenceHost, Any, dict[str, Any]]:
    write_config(workspace, budget=100_000, choices={TARGET: disclosure, "host:read_file": "full"})
    host = await open_host()
    session = await host.start_session(title="t", model=program_turns(PROGRAM))
    await session.run_turn("go")
    settled = [
        e.data for e in session.log.events if e.type == "tool-settled" and e.data["result"]["tool"] == "run_code"
    ]
    assert settled and settled[0]["result"]["status"] == "ok", settled
    return host, session, settled[0]["result"]["value"]["value"]


def catalog_text(session: Any) -> str:
    return "\n".join(e.message["content"] for e in session.surface.entries if e.provenance == "ptc-plus:catalog")


@pytest.mark.asyncio
async def test_full_is_delivered_and_callable(open_host: HostFactory, workspace: Path) -> None:
    host, session, value = await run_with(open_host, workspace, "full")
    assert "notes_search" in value["names"] and value["found"] == {"notes": []}
    assert "async def notes_search(" in catalog_text(session)
    entry = entry_of(plan_of(host, session), TARGET)
    assert entry is not None and (entry.disclosure, entry.reason) == (Disclosure.FULL, Reason.EXPLICIT)


@pytest.mark.asyncio
async def test_on_demand_is_named_findable_and_callable(open_host: HostFactory, workspace: Path) -> None:
    host, session, value = await run_with(open_host, workspace, "on-demand")
    assert "notes_search" in value["names"] and value["found"] == {"notes": []}
    text = catalog_text(session)
    assert "async def notes_search(" not in text  # the contract is not delivered up front...
    assert "# - notes_search:" in text  # ...but navigation names it
    snapshot = controller(host.services).discovery(session.agent)
    assert snapshot is not None
    hits = search(snapshot, "search notes")
    assert TARGET in {m["identity"] for m in [*hits["expanded"], *hits["not_expanded"]]}
    assert "async def notes_search(" in hits["text"]


@pytest.mark.parametrize("confined", [False, pytest.param(True, marks=pytest.mark.needs_bwrap)])
@pytest.mark.asyncio
async def test_off_is_absent_everywhere(
    open_host: HostFactory, workspace: Path, tmp_path: Path, confined: bool
) -> None:
    if confined:
        write_user_config(tmp_path, "version = 1\n")  # the default workspace-write policy
    host, session, value = await run_with(open_host, workspace, "off")
    assert "notes_search" not in value["names"]
    # The program is told why: the plan keeps it out (not "no such tool", no empty list of close matches).
    assert (
        value["found"]
        == "missing: tools.notes_search is off in this session's capability plan: a program cannot call it"
    )
    assert "notes_search" not in catalog_text(session)  # neither contract nor navigation
    assert "notes_search" not in session.system_prompt()
    assert "notes_search" not in [s.name for s in session.model_tools()]
    snapshot = controller(host.services).discovery(session.agent)
    assert snapshot is not None and snapshot.get(TARGET) is None
    assert TARGET not in {m["identity"] for m in find(snapshot, "notes_search")["matches"]}
    hits = search(snapshot, "search notes")
    assert TARGET not in {m["identity"] for m in [*hits["expanded"], *hits["not_expanded"]]}
    assert "notes_search" not in hits["text"]
    # The host itself still offers it: the plan, not the host, took it away from programs.
    assert "notes_search" in host.view(session.agent).names()


@pytest.mark.parametrize("parent_call_id", ["c", None], ids=["nested", "top-level"])
@pytest.mark.asyncio
async def test_a_crafted_call_to_an_off_member_is_refused_at_any_depth(
    open_host: HostFactory, workspace: Path, parent_call_id: str | None
) -> None:
    write_config(workspace, choices={TARGET: "off"})
    host = await open_host()
    session = await host.start_session(title="t")
    ctl = controller(host.services)
    assert state_of(host, session).ptc
    spec = next(s for s in host.view(session.agent).specs() if s.name == "notes_search")
    call = ToolCall(
        call_id="c:1", tool="notes_search", arguments={}, caller=session.agent, parent_call_id=parent_call_id
    )
    refusal = ctl.guard(call, spec)
    assert refusal is not None and refusal.code == "capability-off"
    # An on-demand member stays callable at any depth.
    other = next(s for s in host.view(session.agent).specs() if s.name == "read_file")
    assert ctl.guard(attrs.evolve(call, tool="read_file"), other) is None


@pytest.mark.asyncio
async def test_a_models_direct_call_to_an_off_member_never_runs(open_host: HostFactory, workspace: Path) -> None:
    write_config(workspace, choices={"host:notes_delete": "off"})
    model = ScriptedModel(
        [
            AssistantTurn(tool_calls=(RequestedCall(tool="notes_delete", arguments={"id": 1}),)),
            AssistantTurn(text="done"),
        ]
    )
    host = await open_host()
    session = await host.start_session(title="t", model=model)
    await session.run_turn("go")
    settled = [e.data["result"] for e in session.log.events if e.type == "tool-settled"]
    assert settled and settled[0]["tool"] == "notes_delete" and settled[0]["status"] == "error"
    assert settled[0]["dispatched"] is False


@pytest.mark.asyncio
async def test_explicit_full_over_budget_is_delivered_whole_and_reported(
    open_host: HostFactory, workspace: Path
) -> None:
    write_config(workspace, budget=10, choices={"host:search_files": "full"})
    host = await open_host()
    session = await host.start_session(title="t", model=program_turns("return 1"))
    await session.run_turn("go")
    text = catalog_text(session)
    capability = state_of(host, session).catalog.get("host:search_files")
    assert capability is not None and capability.contract.strip() in text  # not cut
    receipt = session.command("/capabilities")
    assert "over budget, kept in full" in receipt.text
    environment = receipt.data["environment"]
    assert isinstance(environment, dict) and isinstance(environment["plan"], dict)
    plan = environment["plan"]
    assert plan["overage_tokens"] == plan["used_tokens"] - 10 > 0


@pytest.mark.asyncio
async def test_an_off_skill_leaves_the_catalog_and_cannot_be_loaded(
    open_host: HostFactory, workspace: Path, tmp_path: Path
) -> None:
    skills = tmp_path / "skills"
    write_skill(skills, "pdf", "Fill PDF forms.")
    write_skill(skills, "charts", "Draw charts.")
    write_config(workspace, budget=100_000, choices={"skill:pdf": "off", "skill:charts": "full"})
    host = await open_host(skills_dirs=[skills])
    model = program_turns('return await tools.load_skill(name="pdf")')
    session = await host.start_session(title="t", model=model)
    await session.run_turn("go")
    text = catalog_text(session)
    assert "# skill charts: Draw charts." in text and "pdf" not in text.lower()
    # The host's own skill section is gone under code mode (plan-independent, so the prefix stays
    # stable): skill lines travel only in the plan's catalog message.
    assert "pdf" not in model.requests[0].system.lower() and "charts" not in model.requests[0].system.lower()
    settled = [e.data["result"] for e in session.log.events if e.type == "tool-settled"]
    nested = next(r for r in settled if r["tool"] == "load_skill")
    assert nested["status"] != "ok"
    assert nested["error"]["code"] == "refused" and "capability-off" in str(nested["error"])
