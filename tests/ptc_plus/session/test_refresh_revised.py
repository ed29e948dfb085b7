"""A refresh takes in a member's changed contract, whatever its disclosure (ADR 0090, issue 26 item 2).

The host replaces an on-demand tool with one that has a new required argument,
or a skill's catalog line changes: ``/capabilities refresh`` reports the member
*revised* (receipt, notice), and at that transition discovery answers, the
expansion messages and the persisted plan all switch to the new contract;
compaction recovery never re-sends the old one as "still valid", refreshed or
not; a resumed session agrees with the live one. (A resource source's revision
is tested with a real MCP server in ``tests/ptc_plus/adapters/test_mcp_sources.py``.)
"""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest

from hookspecs import ReceiptStatus, ToolDefinition
from hookspecs.reference import ReferenceHost, ScriptedModel, Session
from hookspecs.reference.demo_tools import demo_tool_definitions
from ptc_plus.capabilities import build_catalog
from ptc_plus.config import Disclosure
from ptc_plus.i18n import message
from ptc_plus.plugin import controller
from ptc_plus.session.contract_memory import EXPANSION_PROVENANCE, RECOVERY_PROVENANCE

from .conftest import HostFactory, entry_of, plan_of, state_of, write_config, write_skill
from .test_expansions import CONVERT, INSPECT, USE, cell, committed, results, said

pytestmark = pytest.mark.usefixtures("unconfined")

LOOK = "found = await capabilities.inspect(['convert_units'])\nreturn [found['text'], found['expanded'][0]['revision']]"
"""A cell that looks convert_units up and returns the contract text discovery delivered and its revision."""


def with_precision(workspace: Path) -> list[ToolDefinition]:
    """The demo tools, convert_units replaced by one with a new required argument ``precision``."""
    tools = []
    for definition in demo_tool_definitions(workspace):
        if definition.spec.name == "convert_units":
            schema = dict(definition.spec.input_schema)
            schema["properties"] = {**schema["properties"], "precision": {"type": "integer"}}  # type: ignore[dict-item]
            schema["required"] = [*schema["required"], "precision"]  # type: ignore[misc]
            definition = attrs.evolve(definition, spec=attrs.evolve(definition.spec, input_schema=schema))
        tools.append(definition)
    return tools


def replace_convert(host: ReferenceHost, workspace: Path) -> ToolDefinition:
    """Swap the host's convert_units for the one with ``precision`` (same identity, new contract)."""
    new = next(d for d in with_precision(workspace) if d.spec.name == "convert_units")
    host.remove_tool("convert_units")
    host.add_tool(new)
    return new


def contract(host: ReferenceHost, session: Session, identity: str) -> tuple[str, str]:
    """What discovery answers from for ``identity``: its contract text and revision."""
    snapshot = controller(host.services).discovery(session.agent)
    assert snapshot is not None
    capability = snapshot.get(identity)
    assert capability is not None, identity
    return capability.contract, capability.revision


def catalog_texts(session: Session) -> list[str]:
    return committed(session, "ptc-plus:catalog")


@pytest.mark.asyncio
async def test_an_on_demand_tool_with_a_new_required_argument_is_revised_and_every_projection_switches(
    open_host: HostFactory, workspace: Path
) -> None:
    write_config(workspace)  # nothing backed: convert_units is on demand
    host = await open_host()
    model = ScriptedModel([cell(INSPECT), said("1"), cell(USE), said("2"), said("3"), cell(LOOK), said("4")])
    session = await host.start_session(title="t", model=model)
    await session.run_turn("look it up")
    await session.run_turn("use it")
    old_contract, old_revision = contract(host, session, CONVERT)
    assert entry_of(plan_of(host, session), CONVERT).disclosure is Disclosure.ON_DEMAND

    replace_convert(host, workspace)
    receipt = session.command("/capabilities refresh")
    assert receipt.status is ReceiptStatus.APPLIED, receipt.text
    assert [c["identity"] for c in receipt.data["diff"]["revised"]] == [CONVERT]
    assert f"contract revised: {CONVERT}" in receipt.text
    # Discovery and the persisted plan switch at the transition.
    new_contract, new_revision = contract(host, session, CONVERT)
    assert new_revision != old_revision and "precision" in new_contract and "precision" not in old_contract
    assert entry_of(plan_of(host, session), CONVERT).revision == new_revision
    assert session.command("/capabilities refresh").status is ReceiptStatus.UNCHANGED  # and only once

    await session.run_turn("after the refresh")
    notice = catalog_texts(session)[-1]["text"]
    assert notice.startswith("# Capability refresh #1")
    assert message("ptc.refresh.notice-revised", "en", names="convert_units") in notice
    # The model held the old contract in an expansion message: the new one follows the notice at once.
    expansions = committed(session, EXPANSION_PROVENANCE)
    assert len(expansions) == 2 and expansions[-1]["turn"] == 3
    assert new_contract.strip() in expansions[-1]["text"] and old_contract.strip() not in expansions[-1]["text"]

    await session.run_turn("look it up again")
    text, revision = results(session)[-1]["value"]["value"]
    assert revision == new_revision and "precision" in text  # what the program gets is the new contract
    assert len(committed(session, EXPANSION_PROVENANCE)) == 2  # the model already has it: not sent again


@pytest.mark.asyncio
async def test_after_a_refresh_compaction_recovery_never_re_sends_the_old_contract(
    open_host: HostFactory, workspace: Path
) -> None:
    write_config(workspace)
    host = await open_host()
    model = ScriptedModel([cell(INSPECT), said("1"), cell(USE), said("2"), said("3"), said("4")])
    session = await host.start_session(title="t", model=model)
    await session.run_turn("look it up")
    await session.run_turn("use it")
    _, old_revision = contract(host, session, CONVERT)
    replace_convert(host, workspace)
    assert session.command("/capabilities refresh").status is ReceiptStatus.APPLIED
    session.compact()  # before the model saw anything of the refresh: its expansion of the old contract is gone
    await session.run_turn("after the compaction")
    assert committed(session, RECOVERY_PROVENANCE) == []
    _, new_revision = contract(host, session, CONVERT)
    why = message("ptc.recovery.changed", identity=CONVERT, old=old_revision, new=new_revision)
    assert why in session.command("/capabilities").text


@pytest.mark.asyncio
async def test_without_a_refresh_recovery_never_calls_a_contract_the_host_changed_valid(
    open_host: HostFactory, workspace: Path
) -> None:
    write_config(workspace)
    host = await open_host()
    model = ScriptedModel([cell(INSPECT), said("1"), cell(USE), said("2"), said("3")])
    session = await host.start_session(title="t", model=model)
    await session.run_turn("look it up")
    await session.run_turn("use it")
    old_contract, old_revision = contract(host, session, CONVERT)
    new = build_catalog(tools=[replace_convert(host, workspace).spec], cache=None).get(CONVERT)
    assert new is not None and new.revision != old_revision
    session.compact()
    await session.run_turn("after the compaction")
    assert committed(session, RECOVERY_PROVENANCE) == []  # the plan still holds it, the host does not
    assert contract(host, session, CONVERT) == (old_contract, old_revision)  # frozen until a refresh
    shown = session.command("/capabilities").text
    why = message("ptc.recovery.host-changed", identity=CONVERT, old=old_revision, new=new.revision)
    assert why in shown
    assert f"A refresh now would: contract revised: {CONVERT}" in shown


@pytest.mark.asyncio
async def test_a_resumed_session_agrees_with_the_live_one_after_the_refresh(
    open_host: HostFactory, workspace: Path
) -> None:
    write_config(workspace)
    host = await open_host()
    session = await host.start_session(title="t", model=ScriptedModel([cell(INSPECT), said("1")]))
    await session.run_turn("look it up")
    replace_convert(host, workspace)
    assert session.command("/capabilities refresh").status is ReceiptStatus.APPLIED
    live_plan, live_contract = plan_of(host, session), contract(host, session, CONVERT)
    await host.aclose()

    again = await open_host(tools=with_precision(workspace))
    resumed = await again.resume_session(session.agent.session_id, model=ScriptedModel([said("2")]))
    assert plan_of(again, resumed) == live_plan  # the record holds the new revision
    assert contract(again, resumed, CONVERT) == live_contract
    assert not any(CONVERT in d for d in state_of(again, resumed).diagnostics)  # no drift to report


@pytest.mark.asyncio
async def test_an_on_demand_skill_whose_catalog_line_changed_is_revised(
    open_host: HostFactory, workspace: Path, tmp_path: Path
) -> None:
    skills = tmp_path / "skills"
    write_skill(skills, "pdf", "Fill PDF forms.")
    write_config(workspace, choices={"skill:pdf": "on-demand"})
    host = await open_host(skills_dirs=[skills])
    session = await host.start_session(title="t", model=ScriptedModel([said("1"), said("2")]))
    await session.run_turn("one")
    old_contract, old_revision = contract(host, session, "skill:pdf")

    (skills / "pdf" / "SKILL.md").write_text(
        "---\nname: pdf\ndescription: Fill and sign PDF forms.\n---\nBody of pdf.\n", encoding="utf-8"
    )
    host.reload_skills()
    receipt = session.command("/capabilities refresh")
    assert receipt.status is ReceiptStatus.APPLIED, receipt.text
    assert [c["identity"] for c in receipt.data["diff"]["revised"]] == ["skill:pdf"]
    new_contract, new_revision = contract(host, session, "skill:pdf")
    assert new_revision != old_revision and "sign" in new_contract and "sign" not in old_contract
    entry = entry_of(plan_of(host, session), "skill:pdf")
    assert (entry.disclosure, entry.revision) == (Disclosure.ON_DEMAND, new_revision)
    await session.run_turn("two")
    assert message("ptc.refresh.notice-revised", "en", names="pdf") in catalog_texts(session)[-1]["text"]
