"""The hub's restart policy: bounded restarts with back-off, then a rest (ADR 0072, ADR 0093).

Crashes mid-call, hung calls and failed starts all count; a successful call resets the count.
"""

# ruff: noqa: F811 - the fixtures are imported from mcp_support (this directory has no conftest of its own)

from __future__ import annotations

import asyncio
import os
import signal
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession

from ptc_plus.adapters.mcp import hub as hub_module
from ptc_plus.adapters.mcp.errors import RequestTimedOut, ServerCrashed, ServerGaveUp, ServerUnavailable
from ptc_plus.adapters.mcp.hub import Hub, Server, ServerKey

from .mcp_support import FIXTURE, mark, servers_with, within  # noqa: F401 - fixture

HOLDER = "test"


@pytest.mark.asyncio
async def test_a_server_that_keeps_failing_rests_after_max_failures(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(hub_module, "BACKOFF_S", (0.0,))
    hub = Hub()
    server = hub.hold(HOLDER, ServerKey(name="broken", command=str(tmp_path / "missing"), timeout_s=5))
    try:
        for _ in range(hub_module.MAX_FAILURES):
            with pytest.raises(ServerUnavailable) as failed:
                await hub.call(server.session())
            assert failed.value.code == "PTC-7020" and "broken" in failed.value.message()
        with pytest.raises(ServerGaveUp) as rested:
            await hub.call(server.session())
        assert rested.value.code == "PTC-7004"
        monkeypatch.setattr(hub_module, "GIVE_UP_S", 0.0)  # the rest is over: one more try is allowed
        with pytest.raises(ServerUnavailable):
            await hub.call(server.session())
    finally:
        await hub.arelease(HOLDER)


@pytest.mark.asyncio
async def test_concurrent_first_calls_share_one_start(tmp_path: Path) -> None:
    hub = Hub()
    server = hub.hold(HOLDER, ServerKey(name="fx", command=sys.executable, args=(str(FIXTURE),), timeout_s=20))
    try:
        sessions = await asyncio.gather(*(hub.call(server.session()) for _ in range(5)))
        assert len({id(s) for s in sessions}) == 1
    finally:
        await hub.arelease(HOLDER)


def fixture_key(mark: str, **bounds: float) -> ServerKey:
    return ServerKey(name="fx", command=sys.executable, args=(str(FIXTURE), mark), **bounds)


async def call(hub: Hub, server: Server, tool: str) -> Any:
    async def send(session: ClientSession) -> Any:
        return await session.call_tool(tool, {})

    return await hub.call(server.request(tool, send))


@pytest.fixture
def no_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hub_module, "BACKOFF_S", (0.0,))


@pytest.mark.asyncio
@pytest.mark.usefixtures("no_backoff")
async def test_a_server_that_keeps_crashing_mid_call_rests_with_the_reason_and_the_time_of_the_next_try(
    mark: str,
) -> None:
    hub = Hub()
    server = hub.hold(HOLDER, fixture_key(mark))
    try:
        for n in range(1, hub_module.MAX_FAILURES + 1):
            with pytest.raises(ServerCrashed):
                await call(hub, server, "die")
            assert server.failures == n  # counted once, however the crash was seen
        with pytest.raises(ServerGaveUp) as rested:
            await call(hub, server, "pid")
        assert servers_with(mark) == []  # resting: nothing was started for the refused call
        error = rested.value
        assert error.code == "PTC-7004" and error.params["failures"] == hub_module.MAX_FAILURES
        retry_at = error.params["retry_at"]
        assert retry_at > datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")  # a moment still to come
        crash = ServerCrashed(server="fx", tool="die")
        for lang in ("en", "zh"):
            text = error.message(lang)
            assert crash.message(lang) in text and retry_at in text and str(error.params["seconds"]) in text
    finally:
        await hub.arelease(HOLDER)


@pytest.mark.asyncio
@pytest.mark.usefixtures("no_backoff")
async def test_a_successful_call_resets_the_count_of_crashes(monkeypatch: pytest.MonkeyPatch, mark: str) -> None:
    # The reset does not depend on the bound: at 2 each round is one crash (one server start, ~1.5 CPU-s) not 4.
    monkeypatch.setattr(hub_module, "MAX_FAILURES", 2)
    hub = Hub()
    server = hub.hold(HOLDER, fixture_key(mark))
    try:
        for _round in range(2):  # without the reset the second round would reach MAX_FAILURES and rest
            for _ in range(hub_module.MAX_FAILURES - 1):
                with pytest.raises(ServerCrashed):
                    await call(hub, server, "die")
            assert server.failures == hub_module.MAX_FAILURES - 1
            await call(hub, server, "pid")
            assert server.failures == 0
    finally:
        await hub.arelease(HOLDER)


@pytest.mark.asyncio
async def test_a_server_that_dies_while_idle_counts_as_a_failure_and_is_started_again(mark: str) -> None:
    hub = Hub()
    server = hub.hold(HOLDER, fixture_key(mark))
    try:
        await hub.call(server.session())
        [pid] = servers_with(mark)
        os.kill(pid, signal.SIGKILL)
        assert await asyncio.to_thread(within, lambda: server.failures == 1)  # seen at end of its output
        value = await call(hub, server, "pid")
        assert value.structured_content["pid"] != pid and server.failures == 0
    finally:
        await hub.arelease(HOLDER)


@pytest.mark.asyncio
@pytest.mark.usefixtures("no_backoff")
async def test_a_hung_call_gets_one_timeout_counts_as_a_failure_and_the_next_call_restarts_the_server(
    monkeypatch: pytest.MonkeyPatch, mark: str
) -> None:
    bounds: list[float] = []
    real = hub_module.within

    def counted(seconds: float) -> asyncio.Timeout:
        bounds.append(seconds)
        return real(seconds)

    monkeypatch.setattr(hub_module, "within", counted)
    hub = Hub()
    server = hub.hold(HOLDER, fixture_key(mark, timeout_s=2, start_timeout_s=120))
    try:
        await hub.call(server.session())
        assert bounds == [120]  # the start has its own bound, not the call's
        [first] = servers_with(mark)
        bounds.clear()
        with pytest.raises(RequestTimedOut) as late:
            await call(hub, server, "hang")
        assert late.value.code == "PTC-7003"
        assert bounds == [2]  # one timeout_s and nothing after it on the caller's time (no ping, no stop)
        assert server.failures == 1
        bounds.clear()
        await hub.call(server.session())
        assert bounds == [120]  # a new start
        assert within(lambda: len(servers_with(mark)) == 1 and first not in servers_with(mark))
    finally:
        await hub.arelease(HOLDER)
    assert servers_with(mark) == []
