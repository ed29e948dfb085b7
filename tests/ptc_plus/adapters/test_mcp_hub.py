"""The hub's restart policy: bounded restarts with back-off, then a rest (ADR 0072)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from ptc_plus.adapters.mcp import hub as hub_module
from ptc_plus.adapters.mcp.errors import ServerGaveUp, ServerUnavailable
from ptc_plus.adapters.mcp.hub import Hub, ServerKey

from .mcp_support import FIXTURE

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
