"""``/capabilities refresh`` as a transition: boundary, receipts, failure, idempotence, notices, held names."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from hookspecs import JSONObject, JSONValue, ReceiptStatus, SessionRecord, ToolCall, ToolContext, tool
from hookspecs.reference import AssistantTurn, ReferenceHost, RequestedCall, ScriptedModel, Session
from ptc_plus.config import Disclosure
from ptc_plus.plugin import controller
from ptc_plus.session import refresh as refresh_module
from ptc_plus.session.environment import KIND

from .conftest import HostFactory, entry_of, plan_of, state_of, write_config

pytestmark = pytest.mark.usefixtures("unconfined")

CONVERT = "host:convert_units"
CONVERT_CALL = "await tools.convert_units(value=1, from_unit='km', to_unit='m')"


def run(code: str) -> AssistantTurn:
    return AssistantTurn(tool_calls=(RequestedCall(tool="run_code", arguments={"description": "t", "code": code}),))


def turns(*codes: str) -> list[AssistantTurn]:
    """Each code as one turn: a ``run_code`` step, then a final answer."""
    out: list[AssistantTurn] = []
    for code in codes:
        out += [run(code), AssistantTurn(text="done")]
    return out


def notices(session: Session) -> list[str]:
    """Texts of the catalog-provenance context messages the session committed, oldest first."""
    return [
        e.data["text"] for e in session.log.of_type("context-message") if e.data["provenance"] == "ptc-plus:catalog"
    ]


def environment_records(session: Session) -> list[SessionRecord]:
    return [r for r in session.records if r.kind == KIND]


def settled(session: Session) -> list[dict[str, Any]]:
    return [
        e.data["result"] for e in session.log.of_type("tool-settled") if e.data["result"]["tool"] == "convert_units"
    ]


async def started(host: ReferenceHost, codes: tuple[str, ...] = ()) -> Session:
    return await host.start_session(title="t", model=ScriptedModel(turns(*codes)))


@pytest.mark.asyncio
async def test_a_refresh_during_a_running_cell_waits_for_it_then_the_next_cell_has_the_new_plan(
    open_host: HostFactory, workspace: Path
) -> None:
    write_config(workspace, choices={CONVERT: "full"})
    entered, release = asyncio.Event(), asyncio.Event()

    @tool("hold_here", description="Wait until the test releases the program.")
    async def hold_here(args: JSONObject, ctx: ToolContext) -> JSONValue:
        entered.set()
        await release.wait()
        return "released"

    host = await open_host()
    host.add_tool(hold_here)
    session = await started(host, (f"await tools.hold_here()\nreturn {CONVERT_CALL}", f"return {CONVERT_CALL}"))
    turn = asyncio.create_task(session.run_turn("first"))
    await asyncio.wait_for(entered.wait(), 30)

    write_config(workspace, choices={CONVERT: "off"})
    receipt = session.command("/capabilities refresh")
    assert receipt.status is ReceiptStatus.PENDING, receipt.text
    assert "1 running" in receipt.text and CONVERT in receipt.text
    assert entry_of(plan_of(host, session), CONVERT).disclosure is Disclosure.FULL  # nothing live moved
    assert "pending until the running program ends" in session.command("/capabilities").text

    release.set()
    await asyncio.wait_for(turn, 60)
    first = settled(session)
    assert [r["status"] for r in first] == ["ok"], "the running cell kept its members to the end"
    assert entry_of(plan_of(host, session), CONVERT).disclosure is Disclosure.OFF  # applied when the cell ended
    assert len(environment_records(session)) == 2

    await session.run_turn("second")
    second = [e.data["result"] for e in session.log.of_type("tool-settled") if e.data["result"]["tool"] == "run_code"]
    assert second[-1]["status"] == "error" and "convert_units" in second[-1]["error"]["message"]
    assert len(settled(session)) == 1  # the next cell's namespace no longer has it: nothing dispatched

    # A name held from before the refresh (a crafted nested call, a direct call) is refused, naming the refresh.
    spec = next(s for s in host.view(session.agent).specs() if s.name == "convert_units")
    crafted = ToolCall(call_id="c:x:1", tool="convert_units", arguments={}, caller=session.agent, parent_call_id="c")
    refusal = controller(host.services).guard(crafted, spec)
    assert refusal is not None and refusal.code == "capability-off" and "refresh #1" in refusal.reason
    direct = await session.call_tool("convert_units", {"value": 1, "from_unit": "km", "to_unit": "m"})
    assert not direct.ok and not direct.dispatched and direct.error is not None
    assert "refresh #1" in direct.error.message
    texts = notices(session)
    assert len(texts) == 2 and texts[1].startswith("# Capability refresh #1")
    assert "No longer callable (calls are refused): convert_units" in texts[1]


@pytest.mark.asyncio
async def test_no_change_is_unchanged_with_no_record_and_no_notice(open_host: HostFactory, workspace: Path) -> None:
    write_config(workspace, choices={CONVERT: "full"})
    host = await open_host()
    session = await started(host, ("return 1", "return 2"))
    await session.run_turn("one")
    before = plan_of(host, session)

    receipt = session.command("/capabilities refresh")
    assert receipt.status is ReceiptStatus.UNCHANGED, receipt.text
    await session.run_turn("two")
    assert plan_of(host, session) == before
    assert len(environment_records(session)) == 1
    assert len(notices(session)) == 1  # the first catalog only


@pytest.mark.asyncio
async def test_a_double_refresh_applies_once_and_notifies_once_with_no_model_request(
    open_host: HostFactory, workspace: Path
) -> None:
    write_config(workspace, choices={CONVERT: "full"})
    host = await open_host()
    model = ScriptedModel(turns("return 1", f"return {CONVERT_CALL}", "return 3"))
    session = await host.start_session(title="t", model=model)
    await session.run_turn("one")
    requests = len(model.requests)

    write_config(workspace, choices={CONVERT: "on-demand"})
    first = session.command("/capabilities refresh")
    second = session.command("/capabilities refresh")
    assert (first.status, second.status) == (ReceiptStatus.APPLIED, ReceiptStatus.UNCHANGED)
    assert first.data["refresh"] == 1 and first.data["diff"]["changed"][0]["identity"] == CONVERT
    assert len(model.requests) == requests  # the command asked the model nothing

    await session.run_turn("two")
    await session.run_turn("three")
    texts = notices(session)
    assert len(texts) == 2, "exactly one notice for the refresh"
    assert "Disclosure changed: convert_units (full → on-demand)" in texts[1]
    assert settled(session)[0]["status"] == "ok"  # on-demand stays callable


@pytest.mark.asyncio
async def test_a_validation_failure_keeps_the_old_plan_whole(
    open_host: HostFactory, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_config(workspace, choices={CONVERT: "full"})
    host = await open_host()
    session = await started(host)
    before = state_of(host, session)
    write_config(workspace, choices={CONVERT: "off"})

    def broken(*args: object, **kwargs: object) -> None:
        raise ValueError("catalog text exploded")

    monkeypatch.setattr(refresh_module, "freeze_view", broken)  # the candidate's catalog message is built there
    receipt = session.command("/capabilities refresh")
    assert receipt.status is ReceiptStatus.FAILED
    assert receipt.data["error"]["code"] == "PTC-6001" and "catalog text exploded" in receipt.text
    assert state_of(host, session) is before
    assert len(environment_records(session)) == 1

    monkeypatch.undo()
    assert session.command("/capabilities refresh").status is ReceiptStatus.APPLIED


@pytest.mark.asyncio
async def test_a_persistence_failure_keeps_the_old_plan_whole(
    open_host: HostFactory, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_config(workspace, choices={CONVERT: "full"})
    host = await open_host()
    session = await started(host)
    before = state_of(host, session)
    write_config(workspace, choices={CONVERT: "off"})
    original = host.services.append_record

    def full_disk(agent: Any, record: SessionRecord) -> None:
        if record.kind == KIND:
            raise OSError(28, "No space left on device")
        original(agent, record)

    monkeypatch.setattr(host.services, "append_record", full_disk)
    receipt = session.command("/capabilities refresh")
    assert receipt.status is ReceiptStatus.FAILED
    assert receipt.data["error"]["code"] == "PTC-6002" and "No space left" in receipt.text
    assert state_of(host, session) is before
    assert entry_of(plan_of(host, session), CONVERT).disclosure is Disclosure.FULL


@pytest.mark.asyncio
async def test_dry_run_shows_the_diff_and_applies_nothing(open_host: HostFactory, workspace: Path) -> None:
    write_config(workspace, choices={CONVERT: "full"})
    host = await open_host()
    session = await started(host)
    write_config(workspace, choices={CONVERT: "off"})
    shown = session.command("/capabilities refresh --dry-run")
    assert shown.status is ReceiptStatus.SHOWN
    assert f"turned off: {CONVERT}" in shown.text
    assert entry_of(plan_of(host, session), CONVERT).disclosure is Disclosure.FULL
    assert f"A refresh now would: turned off: {CONVERT}" in session.command("/capabilities").text


@pytest.mark.asyncio
@pytest.mark.parametrize("line", ["/capabilities refesh", "/capabilities refresh --force", "/capabilities show all"])
async def test_unknown_arguments_fail_listing_the_valid_ones(
    open_host: HostFactory, workspace: Path, line: str
) -> None:
    write_config(workspace)
    host = await open_host()
    session = await started(host)
    receipt = session.command(line)
    assert receipt.status is ReceiptStatus.FAILED
    assert receipt.data["error"]["code"] == "PTC-6003"
    assert "/capabilities refresh --dry-run" in receipt.text


@pytest.mark.asyncio
async def test_a_parent_refresh_bounds_its_child_without_re_planning_it(
    open_host: HostFactory, workspace: Path
) -> None:
    write_config(workspace, choices={CONVERT: "full"})
    host = await open_host()
    parent = await started(host)
    child = await parent.fork(title="child")
    child_plan = plan_of(host, child)

    write_config(workspace, choices={CONVERT: "off"})
    receipt = parent.command("/capabilities refresh")
    assert receipt.status is ReceiptStatus.APPLIED
    assert "1 child session(s) keep their own plans" in receipt.text
    assert plan_of(host, child) == child_plan  # not re-planned
    result = await child.call_tool("convert_units", {"value": 1, "from_unit": "km", "to_unit": "m"})
    assert not result.ok and result.error is not None
    assert "parent session" in result.error.message


@pytest.mark.asyncio
async def test_a_crash_between_persisting_and_notifying_delivers_the_notice_once_on_resume(
    open_host: HostFactory, workspace: Path, tmp_path: Path
) -> None:
    write_config(workspace, choices={CONVERT: "full"})
    changed = write_config(workspace, choices={CONVERT: "off"}).read_text(encoding="utf-8")
    write_config(workspace, choices={CONVERT: "full"})
    child = subprocess.run(
        [
            sys.executable,
            "-m",
            "tests.ptc_plus.session.refresh_crash_child",
            str(workspace),
            str(tmp_path / "state"),
            changed,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=Path(__file__).resolve().parents[3],
    )
    assert child.returncode == -signal.SIGKILL, child.stderr
    session_id, status = child.stdout.split()
    assert status == "applied"

    host = await open_host()
    session = await host.resume_session(session_id, model=ScriptedModel(turns("return 2", "return 3")))
    assert entry_of(plan_of(host, session), CONVERT).disclosure is Disclosure.OFF  # the persisted record decides
    await session.run_turn("two")
    await session.run_turn("three")
    texts = notices(session)
    assert len(texts) == 2 and texts[1].startswith("# Capability refresh #1"), texts
    assert "No longer callable (calls are refused): convert_units" in texts[1]
    refusal = await session.call_tool("convert_units", {"value": 1, "from_unit": "km", "to_unit": "m"})
    assert refusal.error is not None and "refresh #1" in refusal.error.message  # held names survive the restart


@pytest.mark.asyncio
async def test_a_compaction_that_drops_the_catalog_owes_it_again_once_also_after_resume(
    open_host: HostFactory, workspace: Path
) -> None:
    write_config(workspace, choices={CONVERT: "full"})
    host = await open_host()
    session = await started(host, ("return 1", "return 2", "return 3", "return 4"))
    await session.run_turn("one")
    session.compact()  # the latest turn's messages stay: the catalog was committed in it
    await session.run_turn("two")
    assert len(notices(session)) == 1

    session.compact()  # turn 2 committed no catalog: the one of turn 1 is gone from the surface
    assert not any(e.provenance == "ptc-plus:catalog" for e in session.surface.entries)
    session_id = session.agent.session_id
    await host.aclose()

    resumed_host = await open_host()
    resumed = await resumed_host.resume_session(session_id, model=ScriptedModel(turns("return 3", "return 4")))
    await resumed.run_turn("three")
    await resumed.run_turn("four")
    texts = notices(resumed)
    assert len(texts) == 2 and texts[1] == texts[0]  # owed once, the same plan: no refresh notice
    assert sum(e.provenance == "ptc-plus:catalog" for e in resumed.surface.entries) == 1


@pytest.mark.asyncio
async def test_a_live_session_gets_the_catalog_again_after_a_compaction_dropped_it(
    open_host: HostFactory, workspace: Path
) -> None:
    write_config(workspace, choices={CONVERT: "full"})
    host = await open_host()
    session = await started(host, ("return 1", "return 2", "return 3", "return 4"))
    await session.run_turn("one")
    await session.run_turn("two")
    session.compact()
    await session.run_turn("three")
    await session.run_turn("four")
    assert len(notices(session)) == 2
    assert sum(e.provenance == "ptc-plus:catalog" for e in session.surface.entries) == 1


@pytest.mark.asyncio
async def test_a_native_session_that_stays_native_is_refreshed_quietly(open_host: HostFactory, workspace: Path) -> None:
    native = '\n[runtime]\npresentation = "native"\n'
    write_config(workspace, choices={CONVERT: "full"}, extra=native)
    host = await open_host()
    session = await host.start_session(title="t", model=ScriptedModel([AssistantTurn(text="a")] * 2))
    await session.run_turn("one")
    write_config(workspace, choices={CONVERT: "off"}, extra=native)
    receipt = session.command("/capabilities refresh")
    assert receipt.status is ReceiptStatus.APPLIED
    assert "the model is not told" in receipt.text
    await session.run_turn("two")
    assert notices(session) == []
    assert "convert_units" in [s.name for s in session.model_tools()]  # natively the host's provision applies
