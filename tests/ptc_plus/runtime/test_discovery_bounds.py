"""Discovery requests are bounded and served off the event loop (ADR 0042)."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest

from ptc_plus.capabilities import build_catalog
from ptc_plus.discovery import CatalogSnapshot, build_snapshot
from ptc_plus.runtime import discovery as runtime_discovery
from ptc_plus.runtime.discovery import (
    MAX_INSPECT_NAMES,
    MAX_NAME_CHARS,
    MAX_PHRASINGS,
    MAX_QUERY_CHARS,
    MAX_REQUEST_LIMIT,
    answer,
)
from ptc_plus.runtime.outcome import OutcomeKind
from ptc_plus.runtime.run_limits import ResolvedTimeout

from .conftest import RuntimeFactory


@pytest.fixture(scope="module")
def snapshot() -> CatalogSnapshot:
    return build_snapshot(build_catalog(tools=[]))


@pytest.mark.parametrize(
    ("method", "args", "argument"),
    [
        ("search", {"query": "q" * (MAX_QUERY_CHARS + 1)}, "query"),
        ("find", {"query": "q" * (MAX_QUERY_CHARS + 1)}, "query"),
        ("search", {"query": ["q"] * (MAX_PHRASINGS + 1)}, "phrasings"),
        ("search", {"query": ["q", "q" * (MAX_QUERY_CHARS + 1)]}, "query"),
        ("search", {"query": "q", "limit": MAX_REQUEST_LIMIT + 1}, "limit"),
        ("tree", {"limit": MAX_REQUEST_LIMIT + 1}, "limit"),
        ("inspect", {"names": ["x"] * (MAX_INSPECT_NAMES + 1)}, "names"),
        ("inspect", {"names": ["x" * (MAX_NAME_CHARS + 1)]}, "name"),
    ],
)
def test_oversized_requests_are_refused_with_their_own_code(
    snapshot: CatalogSnapshot, method: str, args: dict[str, Any], argument: str
) -> None:
    ok, body = answer(snapshot, method, args)
    assert not ok and isinstance(body, dict)
    assert body["code"] == "PTC-2008"
    assert f"{argument} is too large" in str(body["message"])


def test_requests_at_the_bounds_are_served(snapshot: CatalogSnapshot) -> None:
    assert answer(snapshot, "search", {"query": "q" * MAX_QUERY_CHARS, "limit": MAX_REQUEST_LIMIT})[0]
    assert answer(snapshot, "search", {"query": ["q" * MAX_QUERY_CHARS] * MAX_PHRASINGS})[0]
    assert answer(snapshot, "inspect", {"names": ["x" * MAX_NAME_CHARS] * MAX_INSPECT_NAMES})[0]


@pytest.mark.asyncio
async def test_a_slow_discovery_neither_stalls_the_loop_nor_holds_the_run(
    make_runtime: RuntimeFactory, workspace: Path, snapshot: CatalogSnapshot, monkeypatch: pytest.MonkeyPatch
) -> None:
    entered = threading.Event()
    release = threading.Event()
    finished = threading.Event()
    released_by_test: list[bool] = []

    def stuck(source: object, method: str, args: object) -> Any:
        entered.set()
        # A bounded wait, so that a loop-blocking implementation fails instead of hanging.
        released_by_test.append(release.wait(30))
        finished.set()
        return {"version": 1}

    monkeypatch.setattr(runtime_discovery.discovery, "call", stuck)
    loop = asyncio.get_running_loop()
    cancelled = asyncio.Event()
    stalled = asyncio.create_task(
        make_runtime().run(
            "return await capabilities.tree()",
            workspace=workspace,
            timeout=ResolvedTimeout(seconds=60),
            discovery=snapshot,
            cancelled=cancelled,
        )
    )
    try:
        assert await loop.run_in_executor(None, entered.wait, 30)
        other = await make_runtime().run("return 'other run finished'", workspace=workspace)
        # The run settles (here: aborted, as on timeout) while its request is still in the thread.
        cancelled.set()
        outcome = await stalled
    finally:
        release.set()
    assert other.value == "other run finished"
    assert outcome.failure is not None and outcome.failure.kind is OutcomeKind.ABORT
    assert await loop.run_in_executor(None, finished.wait, 30)
    assert released_by_test == [True]
