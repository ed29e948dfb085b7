"""Nested-call semantics, driven through the reference host's real dispatcher and ordered lane."""

from __future__ import annotations

import asyncio
import collections
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import attrs
import pytest
import pytest_asyncio

from hookspecs import Concurrency, ResultStatus, ToolContext, ToolDefinition, ToolFailure, ToolResult
from hookspecs.reference import ReferenceHost, Session
from ptc_plus.runtime.code_runtime import CodeRuntime
from ptc_plus.runtime.run_limits import RunLimits
from ptc_plus.runtime.tool import run_code_definition

from .conftest import alive, tool

MAX_PARALLEL = 4


@attrs.define
class Probe:
    """What the test tools saw: an ordered trace and the peak number of overlapping bodies."""

    trace: list[str] = attrs.Factory(list)
    active: int = 0
    peak: int = 0
    gate: asyncio.Event = attrs.Factory(asyncio.Event)
    started: asyncio.Event = attrs.Factory(asyncio.Event)
    outer_returned: asyncio.Event = attrs.Factory(asyncio.Event)
    """Set when ``run_code``'s handler has returned (the outer call is about to settle)."""
    child_pid: int = 0
    finished: dict[str, asyncio.Event] = attrs.Factory(lambda: collections.defaultdict(asyncio.Event))
    on_started: Callable[[], None] | None = None


def probe_tools(probe: Probe) -> list[ToolDefinition]:
    async def work(arguments: Any, context: ToolContext) -> Any:
        label = arguments["label"]
        probe.active += 1
        probe.peak = max(probe.peak, probe.active)
        probe.trace.append(f"start {label}")
        if arguments.get("wait_for_full_pool"):
            # Everyone waits until the pool is full: proves that many bodies overlap.
            if probe.active == MAX_PARALLEL:
                probe.gate.set()
            await probe.gate.wait()
        for _ in range(int(arguments.get("yields", 0))):
            await asyncio.sleep(0)
        if "finish_after" in arguments:
            await probe.finished[arguments["finish_after"]].wait()
        probe.trace.append(f"end {label}")
        probe.finished[label].set()
        probe.active -= 1
        return label

    async def fail(arguments: Any, context: ToolContext) -> Any:
        raise ToolFailure("demo-broken", "it broke", {"why": "test"})

    async def mutate(arguments: Any, context: ToolContext) -> Any:
        arguments["items"].append("added by the tool")  # type: ignore[index]
        return len(arguments["items"])

    async def started(arguments: Any, context: ToolContext) -> Any:
        probe.child_pid = int(arguments.get("pid", 0))
        if probe.on_started is not None:
            probe.on_started()
        probe.started.set()
        return "started"

    async def slow(arguments: Any, context: ToolContext) -> Any:
        # Still running when the program has ended and the outer call starts to settle.
        await probe.outer_returned.wait()
        probe.trace.append("slow done")
        return "slow"

    label_schema = {"type": "object", "properties": {"label": {"type": "string"}}, "required": ["label"]}
    return [
        tool("work", work, input_schema=label_schema),
        tool("exclusive_work", work, input_schema=label_schema, concurrency=Concurrency.EXCLUSIVE),
        tool("fail", fail),
        tool("mutate", mutate),
        tool("started", started),
        tool("slow", slow),
    ]


@pytest_asyncio.fixture
async def probe() -> Probe:
    return Probe()


@pytest_asyncio.fixture
async def open_host(workspace: Path, tmp_path: Path, probe: Probe) -> AsyncIterator[Callable[..., Any]]:
    hosts: list[ReferenceHost] = []
    runtimes: list[CodeRuntime] = []

    async def factory(**limits: Any) -> tuple[ReferenceHost, Session]:
        runtime = CodeRuntime(RunLimits(policy="danger-full-access", warm_spare=False, **limits))
        runtimes.append(runtime)
        host = ReferenceHost(
            workspace=workspace,
            state_dir=tmp_path / "state",
            tools=[*probe_tools(probe), _signalling(run_code_definition(runtime=runtime), probe)],
            load_entry_points=False,
            max_parallel=MAX_PARALLEL,
        )
        hosts.append(host)
        return host, await host.start_session(user_id="u", title="t", session_id="s-1")

    yield factory
    for runtime in runtimes:
        await runtime.aclose()
    for host in hosts:
        await host.aclose()


def _signalling(definition: ToolDefinition, probe: Probe) -> ToolDefinition:
    async def handler(arguments: Any, context: ToolContext) -> Any:
        try:
            return await definition.handler(arguments, context)
        finally:
            probe.outer_returned.set()

    return ToolDefinition(spec=definition.spec, handler=handler)


async def run(session: Session, code: str) -> ToolResult:
    return await session.call_tool("run_code", {"description": "test", "code": code})


def events(session: Session, *types: str) -> list[tuple[str, dict[str, Any]]]:
    return [(event.type, event.data) for event in session.log.events if event.type in types]


@pytest.mark.asyncio
async def test_ids_order_and_commit_order(open_host: Callable[..., Any], probe: Probe) -> None:
    _host, session = await open_host()
    # Bodies finish in reverse order (each waits for the next one's end), but commits follow submission order.
    code = (
        "import asyncio\n"
        "calls = [tools.work(label=str(i), finish_after=str(i + 1)) for i in range(3)] + [tools.work(label='3')]\n"
        "return await asyncio.gather(*calls)\n"
    )
    result = await run(session, code)
    assert result.ok, result
    assert result.value["value"] == ["0", "1", "2", "3"]
    assert result.value["calls"] == 4
    nested = [
        (t, d["call_id"]) for t, d in events(session, "tool-started", "tool-settled") if d["call_id"] != "direct-1@s-1"
    ]
    starts = [cid for t, cid in nested if t == "tool-started"]
    settles = [cid for t, cid in nested if t == "tool-settled"]
    assert starts == settles == [f"direct-1@s-1:ptc:{n}" for n in range(1, 5)]
    assert [entry for entry in probe.trace if entry.startswith("end")] == ["end 3", "end 2", "end 1", "end 0"]
    started = [d for t, d in events(session, "tool-started") if d["parent_call_id"] == "direct-1@s-1"]
    assert [d["arguments"]["label"] for d in started] == ["0", "1", "2", "3"]


@pytest.mark.asyncio
async def test_parallel_bodies_overlap_up_to_max_parallel(open_host: Callable[..., Any], probe: Probe) -> None:
    _host, session = await open_host()
    code = (
        "import asyncio\n"
        "return await asyncio.gather(*[tools.work(label=str(i), wait_for_full_pool=True) for i in range(8)])\n"
    )
    result = await run(session, code)
    assert result.ok, result
    assert probe.peak == MAX_PARALLEL


@pytest.mark.asyncio
async def test_sequential_mode_runs_one_at_a_time(open_host: Callable[..., Any], probe: Probe) -> None:
    _host, session = await open_host(sequential=True)
    code = "import asyncio\nreturn await asyncio.gather(*[tools.work(label=str(i), yields=3) for i in range(6)])\n"
    result = await run(session, code)
    assert result.ok, result
    assert probe.peak == 1


@pytest.mark.asyncio
async def test_exclusive_drains_and_holds_the_pool(open_host: Callable[..., Any], probe: Probe) -> None:
    _host, session = await open_host()
    code = (
        "import asyncio\n"
        "return await asyncio.gather(\n"
        "    tools.work(label='p1', yields=5), tools.work(label='p2', yields=3),\n"
        "    tools.exclusive_work(label='x', yields=3),\n"
        "    tools.work(label='p3'), tools.work(label='p4'))\n"
    )
    result = await run(session, code)
    assert result.ok, result
    trace = probe.trace
    assert trace.index("start x") > max(trace.index("end p1"), trace.index("end p2"))
    assert min(trace.index("start p3"), trace.index("start p4")) > trace.index("end x")
    # ... and the exclusive call committed before anything after it started.
    order = [(t, d["call_id"]) for t, d in events(session, "tool-started", "tool-settled")]
    assert order.index(("tool-settled", "direct-1@s-1:ptc:3")) < order.index(("tool-started", "direct-1@s-1:ptc:4"))


@pytest.mark.asyncio
async def test_tool_failure_is_a_catchable_tool_call_error(open_host: Callable[..., Any]) -> None:
    _host, session = await open_host()
    code = (
        "try:\n"
        "    await tools.fail()\n"
        "except ToolCallError as error:\n"
        "    caught = [error.tool_name, error.code, error.call_id, error.data]\n"
        "try:\n"
        "    await tools.work()\n"  # schema: label is required -> refused by the host's validation
        "except ToolCallError as error:\n"
        "    caught.append(error.code)\n"
        "return caught\n"
    )
    result = await run(session, code)
    assert result.ok, result
    assert result.value["value"] == ["fail", "demo-broken", "direct-1@s-1:ptc:1", {"why": "test"}, "invalid-arguments"]


@pytest.mark.asyncio
async def test_uncaught_tool_call_error_names_the_tool(open_host: Callable[..., Any]) -> None:
    _host, session = await open_host()
    result = await run(session, "await tools.fail()\n")
    assert result.status is ResultStatus.ERROR and result.error is not None
    assert result.error.code == "PTC-2101"
    assert result.error.data["kind"] == "exception"
    assert result.error.data["tool_name"] == "fail"
    assert '"<program>", line 1, in <module>' in result.error.data["traceback"]


@pytest.mark.asyncio
async def test_logged_arguments_are_a_detached_copy(open_host: Callable[..., Any]) -> None:
    _host, session = await open_host()
    result = await run(session, "return await tools.mutate(items=['a'])\n")
    assert result.ok and result.value["value"] == 2
    started = [d for t, d in events(session, "tool-started") if d["call_id"] == "direct-1@s-1:ptc:1"]
    assert started[0]["arguments"] == {"items": ["a"]}


@pytest.mark.asyncio
async def test_queued_calls_are_abandoned_and_admitted_ones_drained(
    open_host: Callable[..., Any], probe: Probe
) -> None:
    _host, session = await open_host()
    code = (
        "import asyncio\n"
        "pending = [asyncio.ensure_future(tools.slow()),\n"
        "           asyncio.ensure_future(tools.exclusive_work(label='never')),\n"
        "           asyncio.ensure_future(tools.work(label='never either'))]\n"
        "await asyncio.sleep(0)\n"
        "return 'left early'\n"
    )
    result = await run(session, code)
    assert result.ok, result
    assert result.value["calls"] == 3
    log = events(session, "tool-started", "tool-settled", "tool-abandoned")
    by_id = {}
    for kind, data in log:
        by_id.setdefault(data["call_id"], []).append(kind)
    assert by_id["direct-1@s-1:ptc:1"] == ["tool-started", "tool-settled"]
    assert by_id["direct-1@s-1:ptc:2"] == ["tool-abandoned"]
    assert by_id["direct-1@s-1:ptc:3"] == ["tool-abandoned"]
    assert "start never" not in probe.trace
    # The admitted call was drained before the outer call settled.
    order = [(kind, data["call_id"]) for kind, data in log]
    assert order.index(("tool-settled", "direct-1@s-1:ptc:1")) < order.index(("tool-settled", "direct-1@s-1"))


@pytest.mark.asyncio
async def test_cancelling_the_outer_call_kills_the_program(open_host: Callable[..., Any], probe: Probe) -> None:
    host, session = await open_host()
    code = "import os\nawait tools.started(pid=os.getpid())\nwhile True:\n    pass\n"
    call = asyncio.create_task(run(session, code))
    await probe.started.wait()
    assert host.dispatcher.cancel("s-1", "direct-1@s-1")
    result = await call
    assert result.status is ResultStatus.CANCELLED
    assert probe.child_pid > 0 and not alive(probe.child_pid)


@pytest.mark.asyncio
async def test_namespace_follows_the_current_view(open_host: Callable[..., Any], probe: Probe) -> None:
    host, session = await open_host()
    probe.on_started = lambda: host.remove_tool("slow")
    code = (
        "names = sorted(tools)\n"
        "await tools.started()\n"
        "try:\n"
        "    await tools.slow()\n"
        "except ToolCallError as error:\n"
        "    return [names, error.code]\n"
    )
    result = await run(session, code)
    assert result.ok, result
    names, error_code = result.value["value"]
    assert "run_code" not in names and "slow" in names
    assert error_code == "unknown-tool"
