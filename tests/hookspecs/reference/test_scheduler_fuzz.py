"""Property test of the ordered lane: random mixes of parallel and exclusive calls, bodies released
in random orders, some cancelled while queued. The default run tries a few dozen schedules; the
slow-marked run (``pytest -m slow``) tries thousands."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hookspecs.reference.scheduler import LaneClosed, OrderedLane
from hookspecs.types import Concurrency

P, X = Concurrency.PARALLEL, Concurrency.EXCLUSIVE

jobs_strategy = st.lists(st.tuples(st.sampled_from([P, P, X]), st.booleans()), min_size=1, max_size=12)


async def _spin(rounds: int = 5) -> None:
    for _ in range(rounds):
        await asyncio.sleep(0)


async def _exercise(max_parallel: int, jobs: list[tuple[Concurrency, bool]], data: Any) -> None:
    lane = OrderedLane(max_parallel)
    release = [asyncio.Event() for _ in jobs]
    running: set[int] = set()
    started: list[int] = []
    committed: list[int] = []

    def body(i: int) -> Any:
        async def run() -> int:
            running.add(i)
            # Invariants at the moment a body starts.
            assert len(running) <= max_parallel
            exclusive_running = [j for j in running if jobs[j][0] is X]
            assert not exclusive_running or running == {exclusive_running[0]}
            if jobs[i][0] is X:
                settled = set(committed) | {j for j in range(i) if tasks[j].cancelled()}
                assert set(range(i)) <= settled, "an exclusive call starts only after every earlier call settled"
            started.append(i)
            await release[i].wait()
            running.discard(i)
            return i

        return run

    def commit(i: int) -> int:
        committed.append(i)
        return i

    tasks = [asyncio.ensure_future(lane.run(lane.ticket(), c, body(i), commit)) for i, (c, _) in enumerate(jobs)]
    await _spin()
    for i, (_, cancel_while_queued) in enumerate(jobs):
        if cancel_while_queued and i not in started:
            tasks[i].cancel()
    while not all(t.done() for t in tasks):
        await _spin()
        if not running:
            # Commits wake each other one loop turn at a time: give a chain of them time to finish.
            await _spin(10 * len(jobs) + 10)
            if not running:
                assert all(t.done() for t in tasks), "the lane stalled with calls still queued"
                break
        choice = data.draw(st.sampled_from(sorted(running)))
        release[choice].set()
    await _spin()
    assert started == sorted(started), "admission follows submission order"
    assert committed == sorted(committed), "commits follow submission order"
    assert set(committed) == set(started)
    for i, task in enumerate(tasks):
        if i in started:
            assert task.result() == i
        else:
            assert task.cancelled()
    await lane.close()
    with pytest.raises(LaneClosed):
        lane.ticket()


def _run(max_parallel: int, jobs: list[tuple[Concurrency, bool]], data: Any) -> None:
    asyncio.run(_exercise(max_parallel, jobs, data))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(min_value=1, max_value=4), jobs_strategy, st.data())
def test_lane_invariants_hold_for_random_schedules(max_parallel: int, jobs: Any, data: Any) -> None:
    _run(max_parallel, jobs, data)


@pytest.mark.slow
@settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(min_value=1, max_value=6), jobs_strategy, st.data())
def test_lane_invariants_hold_for_many_random_schedules(max_parallel: int, jobs: Any, data: Any) -> None:
    _run(max_parallel, jobs, data)
