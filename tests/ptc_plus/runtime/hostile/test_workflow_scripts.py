"""Hostile workflow scripts (ADR 0116): refused before start, contained at run time, and confined even if they escaped.

A workflow script runs as a program of the code runtime under ``read-only``
with no network, and the host answers only its ``agent``/``phase``/``fatal``
calls. These tests run real scripts on a real reference host lending child
agents, with the hostile harness's :class:`~.guard.HostGuard` checking the
host after each run (bait files, processes, keys, memory). The last group
runs, in the workflow's own runtime and lane, programs written as if a
script had escaped the language rules entirely: the sandbox still holds.
"""

from __future__ import annotations

from typing import Any

import pytest

import ptc_plus.plugin
from hookspecs import ToolResult
from hookspecs.reference import ReferenceHost
from hookspecs.reference.demo_tools import demo_tool_definitions
from ptc_plus.runtime import OutcomeKind
from ptc_plus.workflow import WorkflowCaps
from ptc_plus.workflow.guest import GUEST_TOOLS, guest_program
from ptc_plus.workflow.lane import ChildLane
from ptc_plus.workflow.progress import Progress
from tests.ptc_plus.workflow.conftest import Board, providers
from tests.scaffolding import isolate_from_the_machine

from .conftest import HOST_MEMORY_BOUND, Hostile
from .host_tools import hostile_tools

pytestmark = [pytest.mark.asyncio, pytest.mark.needs_bwrap]


@pytest.fixture(autouse=True)
def isolated(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    # Apart from the harness's tmp_path: the guard reports any new file next to its workspace.
    isolate_from_the_machine(monkeypatch, tmp_path_factory.mktemp("environment"))


async def _workflow(hostile: Hostile, script: str, board: Board, **arguments: Any) -> ToolResult:
    """``script`` through ``run_workflow`` on a real host; fails the test if anything escaped."""
    hostile.guard.snapshot()
    tools = [*demo_tool_definitions(hostile.workspace), *hostile_tools(hostile.tool_log)]
    async with ReferenceHost(
        workspace=hostile.workspace,
        tools=tools,
        plugins=[ptc_plus.plugin],
        load_entry_points=False,
        child_providers=providers(board),
    ) as host:
        desk = ptc_plus.plugin.desk(host.services)
        assert desk is not None
        desk.caps = WorkflowCaps(max_concurrent_agents=2, timeout_s=20.0)
        session = await host.start_session(user_id="hostile")
        result = await session.call_tool("run_workflow", {"description": "hostile", "script": script, **arguments})
    escaped = hostile.guard.violations(HOST_MEMORY_BOUND)
    if escaped:
        hostile.guard.repair()
        pytest.fail("ESCAPED: " + "; ".join(escaped), pytrace=False)
    return result


def _stop(result: ToolResult) -> tuple[str, Any]:
    if result.ok:
        assert isinstance(result.value, dict)
        return str(result.value["stop_reason"]), result.value["value"]
    assert result.error is not None
    return str(result.error.data.get("stop_reason", result.error.code)), result.error.message


@pytest.mark.parametrize(
    "script",
    [
        "import os",
        "import ctypes\nreturn ctypes.CDLL(None)",
        "__import__('os').system('id')",
        "return open('/etc/passwd').read()",
        "return tools.write_file(path='x', content='y')",
        "return agent.__globals__['tools']",
        "return parallel.__closure__",
        "return log.__code__.co_consts",
        "return (x for x in ()).gi_frame.f_back.f_globals",
        "async def f():\n    pass\nreturn f().cr_frame",
        "try:\n    1 / 0\nexcept Exception as e:\n    return e.__traceback__.tb_frame",
        "try:\n    1 / 0\nexcept Exception as e:\n    return e.with_traceback",
        "return args.__class__.__mro__",
        "return type(args)",
        "return getattr(agent, '__globals__')",
        "return vars()",
        "return globals()",
        "return [c for c in ().__class__.__base__.__subclasses__()]",
        "return eval('1')",
        "return compile('1', 'x', 'eval')",
        "p = agent('x')\nreturn p._task.get_loop()",
        "class X:\n    pass",
        "match args:\n    case dict(x):\n        pass",
    ],
)
async def test_a_script_reaching_past_its_namespace_is_refused_before_start(hostile: Hostile, script: str) -> None:
    board = Board()
    result = await _workflow(hostile, script, board)
    assert result.error is not None and result.error.code == "PTC-8002", result
    assert board.prompts == []


@pytest.mark.parametrize(
    ("script", "expected"),
    [
        # str.format walks attributes, but only ever yields text: the objects stay out of reach.
        ("return type_name", "NameError"),
        ("return exit", "NameError"),
        ("return iter", "NameError"),
        ("return '{0.__globals__}'.format(agent)[:1]", "{"),
        ("return isinstance(agent, str)", False),
    ],
)
async def test_what_passes_the_check_finds_nothing_at_run_time(hostile: Hostile, script: str, expected: Any) -> None:
    board = Board()
    stop, value = _stop(await _workflow(hostile, script, board))
    if expected == "NameError":
        assert stop == "failed" and "NameError" in str(value)
    else:
        assert stop == "completed" and value == expected


async def test_a_cpu_loop_is_stopped_at_the_deadline(hostile: Hostile) -> None:
    board = Board()
    hostile.guard.snapshot()
    async with ReferenceHost(
        workspace=hostile.workspace,
        plugins=[ptc_plus.plugin],
        load_entry_points=False,
        child_providers=providers(board),
    ) as host:
        desk = ptc_plus.plugin.desk(host.services)
        assert desk is not None
        desk.caps = WorkflowCaps(max_concurrent_agents=2, timeout_s=3.0)
        session = await host.start_session()
        result = await session.call_tool("run_workflow", {"script": "while True:\n    pass"})
    assert result.error is not None and result.error.data["stop_reason"] == "timed-out"
    assert hostile.guard.violations(HOST_MEMORY_BOUND) == []


async def test_a_memory_bomb_fails_the_run_not_the_host(hostile: Hostile) -> None:
    board = Board()
    stop, value = _stop(await _workflow(hostile, "x = [0] * (10 ** 10)\nreturn len(x)", board))
    assert stop == "failed" and "MemoryError" in str(value)


async def _escaped(hostile: Hostile, code: str) -> Any:
    """Run ``code`` as if a script had escaped every language rule: a raw program in the workflow's own
    runtime (``read-only``, no network) whose only answered calls are the workflow lane's."""
    board = Board()
    hostile.guard.snapshot()
    async with ReferenceHost(
        workspace=hostile.workspace,
        tools=demo_tool_definitions(hostile.workspace),
        plugins=[ptc_plus.plugin],
        load_entry_points=False,
        child_providers=providers(board),
    ) as host:
        desk = ptc_plus.plugin.desk(host.services)
        assert desk is not None and host.children is not None
        session = await host.start_session()
        caps = WorkflowCaps(max_concurrent_agents=2, timeout_s=20.0)
        fatal: list[str] = []
        lane = ChildLane(
            children=host.children,
            parent=session.agent,
            run_id="escaped",
            caps=caps,
            progress=Progress("escaped", host.services, session.agent, []),
            on_fatal=lambda code, params: fatal.append(code),
        )
        runtime = desk.engine.runtime_for(caps.timeout_s)
        outcome = await runtime.run(
            hostile.program(code), workspace=hostile.workspace, tool_names=GUEST_TOOLS, lane=lane
        )
        await lane.reap(3.0)
    escaped = hostile.guard.violations(HOST_MEMORY_BOUND)
    if escaped:
        hostile.guard.repair()
        pytest.fail("ESCAPED: " + "; ".join(escaped), pytrace=False)
    return outcome


async def test_an_escaped_script_still_cannot_write_the_workspace(hostile: Hostile) -> None:
    code = "return [attempt(open, WORKSPACE + '/planted.txt', 'w'), attempt(os.mkdir, WORKSPACE + '/d')]"
    outcome = await _escaped(hostile, code)
    assert outcome.failure is None and outcome.value == ["EROFS", "EROFS"]
    assert not (hostile.workspace / "planted.txt").exists()


async def test_an_escaped_script_still_has_no_network(hostile: Hostile) -> None:
    code = "import socket\ns = socket.socket()\ns.settimeout(2)\nreturn attempt(s.connect, ('1.1.1.1', 80))"
    outcome = await _escaped(hostile, code)
    assert outcome.failure is None and outcome.value in ("ENETUNREACH", "EHOSTUNREACH", "ENETDOWN")


async def test_an_escaped_script_still_reaches_no_host_tool(hostile: Hostile) -> None:
    outcome = await _escaped(hostile, "return await tools['write_file'](path='x.txt', content='y')")
    assert outcome.failure is not None and outcome.failure.kind in (OutcomeKind.EXCEPTION, OutcomeKind.PROTOCOL)
    assert not (hostile.workspace / "x.txt").exists()


async def test_the_guest_refuses_a_script_the_host_check_was_bypassed_for(hostile: Hostile) -> None:
    # The guest applies the rules again inside the worker: a script that never went through the host's check.
    program = guest_program("import os\nreturn os.getcwd()", None, in_flight=1, max_items=4)
    board = Board()
    hostile.guard.snapshot()
    async with ReferenceHost(
        workspace=hostile.workspace,
        plugins=[ptc_plus.plugin],
        load_entry_points=False,
        child_providers=providers(board),
    ) as host:
        desk = ptc_plus.plugin.desk(host.services)
        assert desk is not None
        raw = await desk.engine.runtime_for(20.0).run(program, workspace=hostile.workspace, tool_names=GUEST_TOOLS)
    assert raw.failure is not None and raw.failure.kind is OutcomeKind.EXCEPTION
    assert "refused by the workflow rules" in raw.failure.message()
    assert board.prompts == []
    assert hostile.guard.violations(HOST_MEMORY_BOUND) == []


_STARTS_RALPH = """\
found = []
for attempt in range(3):
    try:
        await tools.ralph(objective='write three parts of the report')
        found.append('started')
    except ToolCallError as e:
        found.append(e.code)
    except AttributeError:
        found.append('absent')
return found
"""


@pytest.mark.parametrize(
    ("user_text", "refusal"),
    [("write three parts of the report", "absent"), ("/ralph write three parts of the report", "PTC-8007")],
)
async def test_a_program_never_starts_ralph_asked_or_not(hostile: Hostile, user_text: str, refusal: str) -> None:
    """ADR 0125: a program (the model's, maybe an attacker's) calling ``ralph`` is refused, in a turn whose user
    asked for Ralph (``PTC-8007``: a program never starts children) or not (no such tool); no round runs."""
    from hookspecs.reference import AssistantTurn, RequestedCall, ScriptedModel

    board = Board()
    hostile.guard.snapshot()
    call = RequestedCall(tool="run_code", arguments={"description": "hostile", "code": _STARTS_RALPH})
    model = ScriptedModel([AssistantTurn(tool_calls=(call,)), AssistantTurn(text="tried")])
    async with ReferenceHost(
        workspace=hostile.workspace,
        tools=demo_tool_definitions(hostile.workspace),
        plugins=[ptc_plus.plugin],
        load_entry_points=False,
        child_providers=providers(board),
    ) as host:
        session = await host.start_session(user_id="hostile", model=model)
        await session.run_turn(user_text)
        settled = [e for e in session.log.events if e.type == "tool-settled" and e.data["result"]["tool"] == "run_code"]
        desk = ptc_plus.plugin.desk(host.services)
        assert desk is not None and desk.ralphs.get(session.agent.session_id, []) == []
    escaped = hostile.guard.violations(HOST_MEMORY_BOUND)
    if escaped:
        hostile.guard.repair()
        pytest.fail("ESCAPED: " + "; ".join(escaped), pytrace=False)
    found = settled[-1].data["result"]["value"]["value"]
    assert found == [refusal] * 3  # not in the program's tools at all, or there and refused every time
    assert board.ralph_rounds == [] and board.prompts == []
