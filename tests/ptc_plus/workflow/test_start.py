"""A run's start is synchronous and checked; the tool is offered only where it can work; progress and /workflow."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import pytest

import ptc_plus.plugin
from hookspecs import SessionRecord
from hookspecs.reference import AssistantTurn, ReferenceHost, RequestedCall, ScriptedModel
from ptc_plus.workflow import RECORD_KIND

from .conftest import Board, deploy, report, run_script

HostFactory = Callable[..., Awaitable[ReferenceHost]]
pytestmark = [pytest.mark.asyncio, pytest.mark.needs_bwrap]


@pytest.mark.parametrize(
    ("script", "code"),
    [
        ("return (", "PTC-8001"),
        ("import os\nreturn os.getcwd()", "PTC-8002"),
        ("from os import path", "PTC-8002"),
        ("return open('/etc/passwd').read()", "PTC-8002"),
        ("return tools.write_file(path='x', content='y')", "PTC-8002"),
        ("return capabilities.search('x')", "PTC-8002"),
        ("return __builtins__", "PTC-8002"),
        ("return agent.__globals__", "PTC-8002"),
        ("return (lambda: 1).__code__", "PTC-8002"),
        ("g = (x for x in [1])\nreturn g.gi_frame.f_back", "PTC-8002"),
        ("return getattr(agent, 'x')", "PTC-8002"),
        ("class A:\n    pass", "PTC-8002"),
        ("return agent('x', provider='nowhere')", "PTC-8004"),
    ],
)
async def test_what_cannot_start_is_refused_at_once_and_nothing_runs(
    open_host: HostFactory, board: Board, script: str, code: str
) -> None:
    host = await open_host()
    session = await host.start_session()
    result = await run_script(session, script)
    assert not result.ok and result.error is not None
    assert result.error.code == code, result.error.message
    assert "stop_reason" not in result.error.data  # no run: a refusal, not a stop reason
    assert board.prompts == []
    desk = ptc_plus.plugin.desk(host.services)
    assert desk is not None and desk.engine.runs == {}


async def test_caps_above_the_deployment_are_refused(open_host: HostFactory) -> None:
    host = await open_host()
    deploy(host, max_total_agents=10)
    session = await host.start_session()
    result = await run_script(session, "return 1", max_total_agents=11)
    assert result.error is not None and result.error.code == "PTC-8003"
    assert report(await run_script(session, "return 1", max_total_agents=10))["stop_reason"] == "completed"


async def test_a_host_lending_no_children_offers_no_workflow(open_host: HostFactory) -> None:
    host = await open_host(child_providers=None)
    session = await host.start_session()
    assert "run_workflow" not in host.view(session.agent).names()
    receipt = session.command("/workflow")
    assert receipt.status.value == "failed" and "no child agents" in receipt.text


async def test_children_of_a_workflow_get_no_workflow_tool(open_host: HostFactory) -> None:
    host = await open_host()
    session = await host.start_session()
    assert "run_workflow" in host.view(session.agent).names()
    child = await session.fork(title="c")
    assert "run_workflow" not in host.view(child.agent).names()


async def test_a_program_cannot_start_a_workflow(open_host: HostFactory, board: Board) -> None:
    host = await open_host()
    code = (
        "try:\n    await tools.run_workflow(script='return 1')\nexcept ToolCallError as e:\n    return e.code\n"
        "except AttributeError:\n    return 'absent'\n"
    )
    call = RequestedCall(tool="run_code", arguments={"description": "t", "code": code})
    session = await host.start_session(model=ScriptedModel([AssistantTurn(tool_calls=(call,)), AssistantTurn()]))
    await session.run_turn("go")
    settled = [e for e in session.log.events if e.type == "tool-settled" and e.data["result"]["tool"] == "run_code"]
    assert settled[-1].data["result"]["value"]["value"] in ("PTC-8007", "absent")
    assert board.prompts == []


async def test_progress_is_recorded_in_the_parent_and_shown_by_the_command(open_host: HostFactory) -> None:
    host = await open_host()
    session = await host.start_session()
    await run_script(session, "phase('one')\nawait agent('echo a')\nawait agent('fail b')\nreturn 1")
    kinds = [r.payload["kind"] for r in session.records if r.kind == RECORD_KIND]
    assert kinds == [
        "run-started",
        "phase",
        "child-started",
        "child-ended",
        "child-started",
        "child-ended",
        "run-ended",
    ]
    receipt = session.command("/workflow")
    assert receipt.data["runs"][0]["succeeded"] == 1 and receipt.data["runs"][0]["failed"] == 1
    assert receipt.data["runs"][0]["phase"] == "one" and receipt.data["runs"][0]["stop"] == "completed"


async def test_a_recorder_failure_is_contained_and_reported(
    open_host: HostFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    host = await open_host()
    session = await host.start_session()
    original = host.services.append_record

    def failing(agent: object, record: SessionRecord) -> None:
        if record.kind == RECORD_KIND:
            raise OSError("disk full")
        original(agent, record)  # type: ignore[arg-type]

    monkeypatch.setattr(host.services, "append_record", failing)
    shown = report(await run_script(session, "return await agent('echo fine')"))
    assert shown["stop_reason"] == "completed" and shown["value"] == "fine"
    assert any("disk full" in note and "incomplete" in note for note in shown["notes"])


async def test_a_background_run_returns_a_job_and_its_report_arrives_as_one_message(
    open_host: HostFactory, board: Board
) -> None:
    host = await open_host()
    model = ScriptedModel([AssistantTurn(text="ok"), AssistantTurn(text="ok again")])
    session = await host.start_session(model=model)
    started = await run_script(session, "return await agent('echo later')", background=True)
    assert started.ok and isinstance(started.value, dict)
    job = str(started.value["job"])
    desk = ptc_plus.plugin.desk(host.services)
    assert desk is not None
    run = desk.engine.runs[session.agent.session_id][-1]
    assert run.run_id == job and run.task is not None
    await asyncio.shield(run.task)
    await session.run_turn("anything new?")
    await session.run_turn("and now?")
    delivered = [str(m["content"]) for r in model.requests for m in r.messages if job in str(m.get("content"))]
    assert len(delivered) >= 1 and '"stop_reason":"completed"' in delivered[0] and '"value":"later"' in delivered[0]
    # One message: the second turn's request carries the same one, not a second copy.
    assert len({d for d in delivered}) == 1


async def test_capabilities_says_whether_workflows_are_offered_and_why_not(open_host: HostFactory) -> None:
    lending = await open_host()
    session = await lending.start_session()
    assert "run_workflow is offered" in session.command("/capabilities").text
    bare = await open_host(child_providers=None)
    other = await bare.start_session()
    assert "lends no child agents" in other.command("/capabilities").text
