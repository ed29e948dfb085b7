"""A crafted child (``crafted_child.py``) breaks the protocol; every breach ends with outcome ``protocol``."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from ptc_plus.runtime.lane import NestedLane
from ptc_plus.runtime.launcher import Launcher
from ptc_plus.runtime.outcome import OutcomeKind, RunOutcome
from ptc_plus.runtime.process import SpawnSpec
from ptc_plus.runtime.run import ProgramRun, RunRequest
from ptc_plus.runtime.run_limits import ResolvedTimeout

from .conftest import FakeServices, limits_with, outer_context, tool

CRAFTED = str(Path(__file__).with_name("crafted_child.py"))
REPLY_BYTES = 100_000


class CraftedLauncher(Launcher):
    def __init__(self, scenario: str, **limits: Any) -> None:
        super().__init__(limits_with(**limits))
        self.scenario = scenario

    def spec_for(self, workspace: Path, protected: Sequence[Path] = ()) -> SpawnSpec:
        argv = (sys.executable, "-I", "-S", CRAFTED, self.scenario, "{read_fd}", "{write_fd}")
        return SpawnSpec(argv=argv, cwd=str(workspace), env=(("PATH", "/usr/bin:/bin"),))


async def run_crafted(
    workspace: Path, scenario: str, *, timeout: float = 30, reply_bytes: int = REPLY_BYTES, **limits: Any
) -> RunOutcome:
    """The crafted child's ``scenario``, with tools ``slow`` (held until the run ends) and ``big``."""
    release = asyncio.Event()

    async def slow(arguments: object, context: object) -> str:
        await release.wait()
        return "late"

    async def big(arguments: object, context: object) -> str:
        return "x" * reply_bytes

    services = FakeServices(workspace, [tool("slow", slow), tool("big", big)])
    lane = NestedLane(services, outer_context(services).call)
    names = ("slow", "big")
    request = RunRequest(code="", workspace=workspace, tool_names=names, timeout=ResolvedTimeout(seconds=timeout))
    try:
        return await ProgramRun(request, CraftedLauncher(scenario, grace_s=0.5, **limits), lane).execute()
    finally:
        release.set()
        await lane.drain()


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("scenario", "detail"),
    [
        ("oversized", "exceeds max_message_bytes"),
        ("non-json", "not JSON"),
        ("unknown-id", "unknown or reused call id 7"),
        ("reused-id", "unknown or reused call id 1"),
        ("flood-calls", "more than 128 pending calls"),
        ("unknown-tool", "'run_code' is not in the program's namespace"),
        ("args-not-object", "args must be a JSON object"),
        ("ready-twice", "ready frame sent twice"),
        ("unknown-type", "unknown frame type 'exec'"),
        ("done-with-host-kind", "error kind timeout"),
        ("log-bad-stream", "known stream"),
        ("before-ready", "call frame before ready"),
        ("other-version", "the child speaks protocol version 2, the host 1"),
        ("discover-unknown-method", "discover frame: unknown method 'exec'"),
        ("discover-args-not-object", "discover frame: args must be a JSON object"),
        ("discover-unknown-argument", "discover frame: tree takes no argument 'path'"),
        ("discover-reused-id", "unknown or reused call id 1"),
    ],
)
async def test_protocol_breach(workspace: Path, scenario: str, detail: str) -> None:
    outcome = await run_crafted(workspace, scenario, max_message_bytes=1_000_000)
    assert outcome.failure is not None
    assert outcome.failure.kind is OutcomeKind.PROTOCOL, outcome.to_json()
    assert detail in outcome.failure.params["detail"]


@pytest.mark.asyncio
async def test_a_well_formed_discover_frame_is_answered_not_dispatched(workspace: Path) -> None:
    outcome = await run_crafted(workspace, "discover-answered", max_message_bytes=1_000_000)
    assert outcome.ok, outcome.to_json()
    assert outcome.value["type"] == "reply" and outcome.value["id"] == 1 and outcome.value["ok"] is False
    assert outcome.value["error"]["code"] == "PTC-2005"  # this run was given no discovery
    assert outcome.calls == 0


@pytest.mark.asyncio
async def test_pending_bytes_are_bounded(workspace: Path) -> None:
    outcome = await run_crafted(workspace, "pending-bytes", max_message_bytes=1000)
    assert outcome.failure is not None and outcome.failure.kind is OutcomeKind.PROTOCOL
    assert "pending call arguments exceed" in outcome.failure.params["detail"]


@pytest.mark.asyncio
async def test_replies_the_child_never_reads_are_not_buffered_without_bound(workspace: Path) -> None:
    # Each reply is larger than a pipe buffer: with replies counted as pending until they are in
    # the pipe, the child's 9th unread request overflows max_pending_calls=8 (not 2000 replies queued).
    outcome = await run_crafted(workspace, "never-read", max_pending_calls=8, max_message_bytes=1_000_000)
    assert outcome.failure is not None
    assert outcome.failure.kind is OutcomeKind.PROTOCOL, outcome.to_json()
    assert "more than 8 pending calls" in outcome.failure.params["detail"]
    assert outcome.calls <= 8


@pytest.mark.asyncio
async def test_a_correct_program_never_trips_the_pending_check(workspace: Path) -> None:
    from ptc_plus.runtime.code_runtime import CodeRuntime

    async def echo(arguments: object, context: object) -> int:
        await asyncio.sleep(0)
        return 1

    services = FakeServices(workspace, [tool("echo", echo)])
    runtime = CodeRuntime(limits_with(max_pending_calls=8))
    try:
        lane = NestedLane(services, outer_context(services).call)
        code = "import asyncio\nreturn sum(await asyncio.gather(*[tools.echo() for _ in range(300)]))"
        outcome = await runtime.run(code, workspace=workspace, tool_names=("echo",), lane=lane)
    finally:
        await runtime.aclose()
    assert outcome.ok, outcome.to_json()
    assert outcome.value == 300 and outcome.calls == 300


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("scenario", "english", "chinese"),
    [
        ("unknown-tool", "'run_code' is not in the program's namespace", "工具 'run_code' 不在程序的命名空间中"),
        ("non-json", "frame is not JSON", "帧不是 JSON"),
    ],
)
async def test_protocol_details_follow_the_locale(
    workspace: Path, monkeypatch: pytest.MonkeyPatch, scenario: str, english: str, chinese: str
) -> None:
    monkeypatch.setenv("PTC_LOCALE", "zh_CN.UTF-8")
    outcome = await run_crafted(workspace, scenario, max_message_bytes=1_000_000)
    assert outcome.failure is not None and outcome.failure.kind is OutcomeKind.PROTOCOL
    assert chinese in outcome.failure.params["detail"] and english not in outcome.failure.params["detail"]
