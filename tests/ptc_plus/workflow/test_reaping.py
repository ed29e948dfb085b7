"""Cancel, deadline and normal end: every child of a run is reaped, awaited by the script or not (host-checked)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import pytest

import ptc_plus.plugin
from hookspecs.reference import ReferenceHost

from .conftest import Board, deploy, report, run_processes, run_script

HostFactory = Callable[..., Awaitable[ReferenceHost]]
pytestmark = [pytest.mark.asyncio, pytest.mark.needs_bwrap]


def _nothing_left(host: ReferenceHost, board: Board) -> None:
    assert host.children is not None
    assert host.children.live() == 0, "a child's turn is still running"
    assert board.cancelled == board.hanging, f"{board.hanging} hanging children, {board.cancelled} cancelled"
    assert run_processes() == []
    desk = ptc_plus.plugin.desk(host.services)
    assert desk is not None and desk.engine.live() == []


async def test_cancelling_the_call_reaps_unawaited_children_too(open_host: HostFactory, board: Board) -> None:
    host = await open_host()
    deploy(host)
    session = await host.start_session()
    script = "agent('hang one')\nagent('hang two')\nreturn await agent('hang three')"
    call = asyncio.ensure_future(run_script(session, script, max_concurrent_agents=3))
    while board.hanging < 3:  # ordering: all three children are inside their model
        await asyncio.sleep(0.01)
        assert not call.done(), call.result()
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    assert board.hanging == 3
    _nothing_left(host, board)
    desk = ptc_plus.plugin.desk(host.services)
    assert desk is not None
    settled = desk.engine.runs[session.agent.session_id][-1].settled
    assert settled is not None and str(settled.stop_reason) == "cancelled"
    assert settled.agents["reaped"] == 3


async def test_a_completed_run_reaps_the_child_it_never_awaited(open_host: HostFactory, board: Board) -> None:
    host = await open_host()
    deploy(host)
    session = await host.start_session()
    result = await run_script(session, "agent('hang forgotten')\nreturn await agent('after-hang')")
    shown = report(result)
    assert shown["stop_reason"] == "completed" and shown["value"] == "after"
    assert shown["agents"]["reaped"] == 1 and shown["agents"]["succeeded"] == 1
    _nothing_left(host, board)


async def test_the_deadline_stops_the_script_and_reaps_children(open_host: HostFactory, board: Board) -> None:
    host = await open_host()
    deploy(host, timeout_s=3.0)
    session = await host.start_session()
    result = await run_script(session, "agent('hang a')\nreturn await agent('hang b')")
    shown = report(result)
    assert shown["stop_reason"] == "timed-out"
    assert result.error is not None and result.error.code == "PTC-8024"
    _nothing_left(host, board)


async def test_a_fatal_error_reaps_the_children_already_running(open_host: HostFactory, board: Board) -> None:
    host = await open_host()
    deploy(host)
    session = await host.start_session()
    script = "h = agent('hang a')\nawait agent('after-hang')\nawait agent('x', bogus=1)\nreturn 'never'"
    shown = report(await run_script(session, script))
    assert shown["stop_reason"] == "failed" and shown["fatal_code"] == "PTC-8011"
    assert shown["agents"]["reaped"] == 1
    _nothing_left(host, board)


async def test_shutdown_cancels_a_background_run_and_reaps_it(open_host: HostFactory, board: Board) -> None:
    host = await open_host()
    deploy(host)
    session = await host.start_session()
    result = await run_script(session, "return await agent('hang bg')", background=True)
    assert result.ok and isinstance(result.value, dict) and str(result.value["job"]).startswith("wf-")
    while board.hanging < 1:
        await asyncio.sleep(0.01)
    desk = ptc_plus.plugin.desk(host.services)
    assert desk is not None
    run = desk.engine.runs[session.agent.session_id][-1]
    await host.aclose()
    assert run.settled is not None and str(run.settled.stop_reason) == "cancelled"
    assert board.cancelled == 1
    assert run_processes() == []
