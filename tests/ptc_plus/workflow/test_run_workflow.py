"""``run_workflow`` end to end on the reference host: values, ``None`` for ordinary failures, fatal errors."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import pytest

from hookspecs.reference import ReferenceHost

from .conftest import Board, deploy, report, run_script, workflow_turns

HostFactory = Callable[..., Awaitable[ReferenceHost]]
pytestmark = [pytest.mark.asyncio, pytest.mark.needs_bwrap]


async def test_scripted_model_runs_a_workflow_and_gets_the_children_texts(open_host: HostFactory, board: Board) -> None:
    host = await open_host()
    script = (
        "phase('ask')\nanswers = await parallel([lambda: agent('echo one'), lambda: agent('echo two')])\nreturn answers"
    )
    session = await host.start_session(model=workflow_turns(script))
    await session.run_turn("split the work")
    settled = [e for e in session.log.events if e.type == "tool-settled" and e.data["result"]["tool"] == "run_workflow"]
    result = settled[-1].data["result"]
    assert result["status"] == "ok", result
    assert result["value"]["stop_reason"] == "completed"
    assert result["value"]["value"] == ["one", "two"]
    assert result["value"]["agents"]["succeeded"] == 2
    # Each child saw its own prompt and nothing of the parent's conversation.
    assert sorted(board.prompts) == ["echo one", "echo two"]
    for request in board.first_requests:
        assert [m["role"] for m in request.messages if m["role"] != "system"] == ["user"]
        assert "split the work" not in str(request.messages)


async def test_an_ordinary_child_failure_is_none(open_host: HostFactory) -> None:
    host = await open_host()
    session = await host.start_session()
    result = await run_script(session, "a = await agent('fail now')\nb = await agent('echo ok')\nreturn [a, b]")
    assert report(result)["stop_reason"] == "completed"
    assert report(result)["value"] == [None, "ok"]
    assert report(result)["agents"]["failed"] == 1


async def test_parallel_item_raising_is_none_and_the_others_complete(open_host: HostFactory) -> None:
    host = await open_host()
    session = await host.start_session()
    script = (
        "def boom():\n    raise ValueError('x')\n"
        "return await parallel([boom, lambda: agent('echo b'), lambda: agent('fail')])"
    )
    assert report(await run_script(session, script))["value"] == [None, "b", None]


async def test_pipeline_items_are_independent_and_a_failed_stage_skips_the_rest(
    open_host: HostFactory, board: Board
) -> None:
    host = await open_host()
    session = await host.start_session()
    script = (
        "return await pipeline(args,"
        " lambda prev, item: agent(item),"
        " lambda prev, item: agent('echo ' + prev + '+checked'))"
    )
    result = await run_script(session, script, args=["echo a", "fail b", "echo c"])
    assert report(result)["value"] == ["a+checked", None, "c+checked"]
    # The failed item's second stage never ran; the other items ran both stages.
    assert sorted(board.prompts) == ["echo a", "echo a+checked", "echo c", "echo c+checked", "fail b"]


async def test_schema_gives_a_validated_object_and_a_mismatch_is_none(open_host: HostFactory) -> None:
    host = await open_host()
    session = await host.start_session()
    script = (
        "schema = {'type': 'object', 'properties': {'n': {'type': 'integer'}}, 'required': ['n']}\n"
        "good = await agent('json {\"n\": 3}', schema=schema)\n"
        'bad = await agent(\'json {"n": "three"}\', schema=schema)\n'
        "return [good, bad]"
    )
    assert report(await run_script(session, script))["value"] == [{"n": 3}, None]


@pytest.mark.parametrize(
    ("script", "code"),
    [
        ("return await agent('echo x', effort='high')", "PTC-8011"),
        ("return await agent('echo x', label=3)", "PTC-8011"),
        ("return await agent('echo x', schema={'type': 'nonsense'})", "PTC-8012"),
        ("return await agent('echo x', provider='plain', schema={'type': 'object'})", "PTC-8012"),
        ("p = 'nowhere'\nreturn await agent('echo x', provider=p)", "PTC-8004"),
        ("return await agent(3)", "PTC-8015"),
    ],
)
async def test_fatal_errors_end_the_run_even_when_the_script_catches_everything(
    open_host: HostFactory, script: str, code: str
) -> None:
    host = await open_host()
    session = await host.start_session()
    indented = "\n".join("    " + line for line in script.splitlines())
    wrapped = f"try:\n{indented}\nexcept Exception:\n    return 'swallowed'\n"
    result = await run_script(session, wrapped)
    assert not result.ok
    assert report(result)["stop_reason"] == "failed"
    assert report(result)["fatal_code"] == code
    assert result.error is not None and result.error.code == "PTC-8021"


async def test_total_agents_cap_trips_fatally(open_host: HostFactory, board: Board) -> None:
    host = await open_host()
    session = await host.start_session()
    script = "out = []\nfor i in range(5):\n    out.append(await agent('echo ' + str(i)))\nreturn out"
    result = await run_script(session, script, max_total_agents=3)
    assert report(result)["stop_reason"] == "cap-tripped"
    assert report(result)["fatal_code"] == "PTC-8013"
    assert report(result)["agents"]["started"] == 3
    assert len(board.prompts) == 3
    assert result.error is not None and result.error.code == "PTC-8023"


async def test_items_per_call_cap_trips_fatally(open_host: HostFactory, board: Board) -> None:
    host = await open_host()
    deploy(host, max_items_per_call=4)
    session = await host.start_session()
    result = await run_script(session, "return await parallel([lambda: agent('echo x')] * 5)")
    assert report(result)["stop_reason"] == "cap-tripped"
    assert report(result)["fatal_code"] == "PTC-8014"
    assert board.prompts == []
