"""The ordered lane: overlap up to the cap, exclusive holds, submission-order commits, close and cancel.

No sleeps as assertions: bodies block on events the test controls, and
``spin`` only hands the loop over so a wrong scheduler gets its chance to
misbehave. ``bounded`` is a hang guard, never a timing assertion.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import pytest

from hookspecs import Concurrency, ToolContext, ToolDefinition, ToolSpec
from hookspecs.reference import AssistantTurn, LaneClosed, OrderedLane, ReferenceHost, RequestedCall, ScriptedModel
from hookspecs.reference.demo_tools import demo_tool_definitions

P, X = Concurrency.PARALLEL, Concurrency.EXCLUSIVE
T = TypeVar("T")


async def spin(rounds: int = 20) -> None:
    """Let every runnable task run a few times (gives a faulty lane the chance to over-admit)."""
    for _ in range(rounds):
        await asyncio.sleep(0)


async def bounded(awaitable: Awaitable[T]) -> T:
    """Await with a generous hang guard: a deadlock fails the test instead of hanging the suite."""
    return await asyncio.wait_for(awaitable, timeout=120)


class Pool:
    """Bodies that count how many run at once; each blocks until released."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.running = 0
        self.peak = 0
        self.started: list[int] = []
        self.full = asyncio.Event()
        self.gates: dict[int, asyncio.Event] = {}

    def body(self, n: int) -> Callable[[], Awaitable[int]]:
        gate = self.gates.setdefault(n, asyncio.Event())

        async def run() -> int:
            self.started.append(n)
            self.running += 1
            self.peak = max(self.peak, self.running)
            if self.running == self.cap:
                self.full.set()
            await gate.wait()
            self.running -= 1
            return n

        return run


# --- OrderedLane directly ------------------------------------------------------


@pytest.mark.asyncio
async def test_parallel_bodies_overlap_up_to_the_cap_and_never_beyond() -> None:
    lane = OrderedLane(3)
    pool = Pool(cap=3)
    committed: list[int] = []
    tasks = [asyncio.create_task(lane.run(lane.ticket(), P, pool.body(n), committed.append)) for n in range(7)]
    await bounded(pool.full.wait())  # only reachable if three bodies really overlap
    await spin()
    assert pool.running == 3 and pool.started == [0, 1, 2]
    pool.gates[1].set()  # one slot frees: exactly one more is admitted, the next in order
    await spin()
    assert pool.started == [0, 1, 2, 3] and pool.running == 3
    for gate in pool.gates.values():
        gate.set()
    await bounded(asyncio.gather(*tasks))
    assert pool.peak == 3
    assert committed == list(range(7))


@pytest.mark.asyncio
async def test_results_commit_in_submission_order_when_bodies_finish_in_reverse() -> None:
    lane = OrderedLane(8)
    finished: list[int] = []
    committed: list[int] = []
    gates = [asyncio.Event() for _ in range(5)]

    def body(n: int) -> Callable[[], Awaitable[int]]:
        async def run() -> int:
            await gates[n].wait()
            finished.append(n)
            if n > 0:
                gates[n - 1].set()  # each body releases the one submitted before it
            return n

        return run

    tasks = [asyncio.create_task(lane.run(lane.ticket(), P, body(n), committed.append)) for n in range(5)]
    await spin()
    gates[4].set()
    results = await bounded(asyncio.gather(*tasks))
    assert finished == [4, 3, 2, 1, 0]
    assert committed == [0, 1, 2, 3, 4]
    assert results == [None] * 5  # run returns what commit returned


@pytest.mark.asyncio
async def test_exclusive_waits_for_the_pool_to_drain_and_holds_it_until_its_commit() -> None:
    lane = OrderedLane(4)
    trace: list[str] = []
    slow_gate = asyncio.Event()

    def body(name: str, gate: asyncio.Event | None = None) -> Callable[[], Awaitable[str]]:
        async def run() -> str:
            trace.append(f"start {name}")
            if gate is not None:
                await gate.wait()
            trace.append(f"end {name}")
            return name

        return run

    def commit(value: str) -> str:
        trace.append(f"commit {value}")
        return value

    excl_gate = asyncio.Event()
    plan = [("slow", P, slow_gate), ("fast", P, None), ("excl", X, excl_gate), ("after", P, None)]
    tasks = [asyncio.create_task(lane.run(lane.ticket(), c, body(n, g), commit)) for n, c, g in plan]
    await spin()
    # Two parallel bodies run; the exclusive one (and everything after it) waits for the pool to drain.
    assert trace == ["start slow", "start fast", "end fast"]
    slow_gate.set()
    await spin()
    # The exclusive body runs alone: the later parallel call is not admitted beside it.
    assert trace[-1] == "start excl"
    excl_gate.set()
    assert await bounded(asyncio.gather(*tasks)) == ["slow", "fast", "excl", "after"]
    assert trace.index("start excl") > trace.index("end slow")
    assert trace.index("start after") > trace.index("commit excl")
    assert [t for t in trace if t.startswith("commit")] == ["commit slow", "commit fast", "commit excl", "commit after"]


@pytest.mark.asyncio
async def test_exclusive_body_finishing_before_earlier_commits_still_holds_the_lane() -> None:
    # excl is admitted once the pool drained, but its commit must wait for an earlier
    # commit; a later parallel call may not start in that gap.
    lane = OrderedLane(4)
    trace: list[str] = []
    gate = asyncio.Event()

    async def blocked() -> str:
        await gate.wait()
        return "blocked"

    async def quick(name: str) -> str:
        trace.append(f"start {name}")
        if name == "quick":
            # Suspend once so this call queues for its commit behind excl's admission wait:
            # excl is then admitted first and finishes its body before "quick" commits.
            await asyncio.sleep(0)
        return name

    def commit(value: str) -> None:
        trace.append(f"commit {value}")

    tasks = [
        asyncio.create_task(lane.run(lane.ticket(), P, blocked, commit)),
        asyncio.create_task(lane.run(lane.ticket(), P, lambda: quick("quick"), commit)),
        asyncio.create_task(lane.run(lane.ticket(), X, lambda: quick("excl"), commit)),
        asyncio.create_task(lane.run(lane.ticket(), P, lambda: quick("after"), commit)),
    ]
    await spin()
    gate.set()
    await bounded(asyncio.gather(*tasks))
    assert trace.index("start after") > trace.index("commit excl")
    assert [t for t in trace if t.startswith("commit")] == [
        "commit blocked",
        "commit quick",
        "commit excl",
        "commit after",
    ]


@pytest.mark.asyncio
async def test_close_abandons_queued_tickets_and_drains_admitted_ones() -> None:
    lane = OrderedLane(1)
    gate = asyncio.Event()
    committed: list[str] = []

    async def admitted() -> str:
        await gate.wait()
        return "admitted"

    async def never() -> str:
        raise AssertionError("a queued ticket ran after close")

    first = asyncio.create_task(lane.run(lane.ticket(), P, admitted, committed.append))
    queued = asyncio.create_task(lane.run(lane.ticket(), P, never, committed.append))
    await spin()
    closing = asyncio.create_task(lane.close())
    with pytest.raises(LaneClosed):
        await bounded(queued)
    await spin()
    assert lane.closed and not closing.done()  # still draining the admitted call
    with pytest.raises(LaneClosed):
        lane.ticket()
    gate.set()
    await bounded(closing)
    assert first.done() and committed == ["admitted"]


@pytest.mark.asyncio
async def test_cancelled_queued_ticket_does_not_stall_the_lane() -> None:
    lane = OrderedLane(1)
    gate = asyncio.Event()
    committed: list[str] = []

    async def blocker() -> str:
        await gate.wait()
        return "first"

    async def value(v: str) -> str:
        return v

    first = asyncio.create_task(lane.run(lane.ticket(), P, blocker, committed.append))
    doomed = asyncio.create_task(lane.run(lane.ticket(), X, lambda: value("doomed"), committed.append))
    last = asyncio.create_task(lane.run(lane.ticket(), P, lambda: value("last"), committed.append))
    await spin()
    doomed.cancel()
    await asyncio.gather(doomed, return_exceptions=True)
    gate.set()
    await bounded(asyncio.gather(first, last))
    assert committed == ["first", "last"]
    await bounded(lane.close())


@pytest.mark.asyncio
async def test_cancelled_ticket_waiting_for_its_commit_does_not_stall_the_lane() -> None:
    lane = OrderedLane(4)
    gate = asyncio.Event()
    committed: list[str] = []

    async def slow() -> str:
        await gate.wait()
        return "slow"

    async def value(v: str) -> str:
        return v

    first = asyncio.create_task(lane.run(lane.ticket(), P, slow, committed.append))
    waiting = asyncio.create_task(lane.run(lane.ticket(), P, lambda: value("done-body"), committed.append))
    await spin()  # "waiting" finished its body and waits for "first" to commit
    waiting.cancel()
    await asyncio.gather(waiting, return_exceptions=True)
    gate.set()
    await bounded(first)
    after = await bounded(lane.run(lane.ticket(), P, lambda: value("after"), committed.append))
    assert after is None and committed == ["slow", "after"]
    await bounded(lane.close())


@pytest.mark.asyncio
async def test_failing_body_commits_nothing_and_the_lane_keeps_going() -> None:
    lane = OrderedLane(2)
    committed: list[str] = []

    async def boom() -> str:
        raise ValueError("body failed")

    async def ok() -> str:
        return "ok"

    results = await bounded(
        asyncio.gather(
            lane.run(lane.ticket(), X, boom, committed.append),
            lane.run(lane.ticket(), P, ok, committed.append),
            return_exceptions=True,
        )
    )
    assert isinstance(results[0], ValueError)
    assert committed == ["ok"]


def test_max_parallel_must_be_positive() -> None:
    with pytest.raises(ValueError):
        OrderedLane(0)


# --- Through the host, with real tools ---------------------------------------------


def pool_tool(pool: Pool, name: str, concurrency: Concurrency = P) -> ToolDefinition:
    async def handler(arguments: Any, context: ToolContext) -> Any:
        return await pool.body(int(arguments["n"]))()

    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    return ToolDefinition(
        spec=ToolSpec(name=name, description="Block until released.", input_schema=schema, concurrency=concurrency),
        handler=handler,
    )


def calls(*items: tuple[str, dict[str, Any]]) -> AssistantTurn:
    return AssistantTurn(
        tool_calls=tuple(RequestedCall(call_id=f"c{i}", tool=t, arguments=a) for i, (t, a) in enumerate(items))
    )


@pytest.mark.asyncio
async def test_host_overlaps_model_tool_calls_up_to_max_parallel(
    make_reference_host: Callable[..., ReferenceHost],
) -> None:
    pool = Pool(cap=2)
    model = ScriptedModel([calls(*[("wait", {"n": n}) for n in range(5)]), AssistantTurn(text="done")])
    async with make_reference_host(tools=[pool_tool(pool, "wait")], max_parallel=2) as host:
        session = await host.start_session(model=model)
        turn = asyncio.create_task(session.run_turn("go"))
        await bounded(pool.full.wait())
        await spin()
        assert pool.started == [0, 1]
        for n in range(5):
            pool.gates.setdefault(n, asyncio.Event()).set()
        await bounded(turn)
    assert pool.peak == 2
    tool_messages = [m["tool_call_id"] for m in model.requests[1].messages if m["role"] == "tool"]
    assert tool_messages == [f"c{n}" for n in range(5)]


@pytest.mark.asyncio
async def test_host_exclusive_tool_holds_the_pool_until_its_result_committed(
    make_reference_host: Callable[..., ReferenceHost],
) -> None:
    pool = Pool(cap=2)
    observed: dict[str, list[Any]] = {}

    async def exclusive(arguments: Any, context: ToolContext) -> Any:
        observed["exclusive-start"] = list(pool.started)
        observed["running-at-exclusive"] = [str(pool.running)]
        return "x"

    async def after(arguments: Any, context: ToolContext) -> Any:
        session = host.session(context.call.caller.session_id)
        observed["settled-before-after"] = [e.data["call_id"] for e in session.log.of_type("tool-settled")]
        return "after"

    tools = [
        pool_tool(pool, "wait"),
        ToolDefinition(spec=ToolSpec(name="excl", description="x", concurrency=X), handler=exclusive),
        ToolDefinition(spec=ToolSpec(name="after", description="a"), handler=after),
    ]
    model = ScriptedModel(
        [calls(("wait", {"n": 0}), ("wait", {"n": 1}), ("excl", {}), ("after", {})), AssistantTurn(text="done")]
    )
    async with make_reference_host(tools=tools, max_parallel=4) as host:
        session = await host.start_session(model=model)
        turn = asyncio.create_task(session.run_turn("go"))
        await bounded(pool.full.wait())
        await spin()
        assert "exclusive-start" not in observed  # the pool has not drained
        pool.gates[1].set()
        await spin()
        assert "exclusive-start" not in observed
        pool.gates[0].set()
        await bounded(turn)
    assert observed["exclusive-start"] == [0, 1] and observed["running-at-exclusive"] == ["0"]
    assert observed["settled-before-after"] == ["c0", "c1", "c2"]


@pytest.mark.asyncio
async def test_host_demo_tools_mixed_classes_commit_in_submission_order(
    make_reference_host: Callable[..., ReferenceHost], reference_workspace: Any
) -> None:
    (reference_workspace / "a.txt").write_text("alpha\n")
    model = ScriptedModel(
        [
            calls(
                ("notes_add", {"title": "first", "body": "alpha"}),
                ("read_file", {"path": "a.txt"}),
                ("notes_search", {"query": "alpha"}),
                ("notes_add", {"title": "second", "body": "beta"}),
                ("convert_units", {"value": 1, "from_unit": "km", "to_unit": "m"}),
            ),
            AssistantTurn(text="done"),
        ]
    )
    async with make_reference_host(tools=demo_tool_definitions(reference_workspace), max_parallel=3) as host:
        session = await host.start_session(model=model)
        await bounded(session.run_turn("go"))
        settled = [(e.data["call_id"], e.data["result"]["value"]) for e in session.log.of_type("tool-settled")]
    assert [cid for cid, _ in settled] == ["c0", "c1", "c2", "c3", "c4"]
    values = dict(settled)
    # notes_search ran after the exclusive add committed and before the second add was admitted.
    assert [n["title"] for n in values["c2"]["notes"]] == ["first"]
    assert values["c3"] == {"id": 2}
    assert values["c4"] == {"value": 1000.0, "unit": "m"}
