"""The run's bounds hold against a hostile program (issue 8, items 6, 7, 9 and 11; ADR 0051).

- Replies the program does not read count against its pending bytes (item 6).
- The timeout covers nested calls: on timeout or abort admitted calls are
  cancelled, a body that ignores it is abandoned after the grace and
  reported, queued calls are abandoned (item 7).
- A frame's value is bounded in nodes and depth before and after it is
  decoded; over the bound it is ``invalid-output`` (item 9).
- A reply the child could not hold is refused by the host, and one it still
  cannot decode fails that call instead of hanging the run (item 11).
"""

from __future__ import annotations

import asyncio
import tracemalloc
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import attrs
import orjson
import pytest
import pytest_asyncio
from hypothesis import given, settings
from hypothesis import strategies as st

from hookspecs import Concurrency, ResultStatus, ToolContext, ToolDefinition, ToolResult
from hookspecs.reference import ReferenceHost, Session
from ptc_plus.runtime import sandbox, values
from ptc_plus.runtime.code_runtime import CodeRuntime
from ptc_plus.runtime.lane import NestedLane
from ptc_plus.runtime.outcome import OutcomeKind, RunOutcome
from ptc_plus.runtime.run_limits import ResolvedTimeout, RunLimits
from ptc_plus.runtime.tool import run_code_definition
from ptc_plus.runtime.worker import frames, lossless

from .conftest import FakeServices, limits_with, outer_context, tool
from .test_protocol_misuse import run_crafted

MIB = 1024 * 1024


# -- item 6: replies the program does not read -------------------------------------------------


@pytest.mark.asyncio
async def test_unread_replies_are_bounded_by_the_pending_bytes(workspace: Path) -> None:
    # 60 calls of a 2 MB result, replies never read: before, the host queued all 60 (120 MB of frames)
    # until the timeout; now the reply that would leave more than max_message_bytes (4 MB) unread ends the run.
    tracemalloc.start()
    try:
        outcome = await run_crafted(
            workspace, "never-read:60", timeout=5, reply_bytes=2 * MIB, max_message_bytes=4 * MIB, memory_bytes=64 * MIB
        )
        _current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert outcome.failure is not None and outcome.failure.kind is OutcomeKind.PROTOCOL, outcome.to_json()
    assert "replies the program has not read" in outcome.failure.params["detail"]
    assert peak < 40 * MIB, peak


def _big_tool(size: int) -> ToolDefinition:
    async def big(arguments: object, context: object) -> str:
        return "x" * size

    return tool("big", big)


async def _run_with_big_results(workspace: Path, code: str, **limits: Any) -> RunOutcome:
    services = FakeServices(workspace, [_big_tool(2 * MIB - 200)])
    runtime = CodeRuntime(limits_with(**limits))
    try:
        lane = NestedLane(services, outer_context(services).call)
        timeout = ResolvedTimeout(seconds=20)
        return await runtime.run(code, workspace=workspace, tool_names=("big",), lane=lane, timeout=timeout)
    finally:
        await runtime.aclose()


@pytest.mark.asyncio
async def test_a_program_that_stops_reading_its_replies_ends_with_protocol(workspace: Path) -> None:
    # A real program sends six calls of a 2 MB result, then blocks without reading: the third reply
    # would leave more than 4 MB unread, so the run ends there instead of at its timeout.
    code = (
        "import asyncio, time\n"
        "calls = [asyncio.ensure_future(tools.big()) for _ in range(6)]\n"
        "await asyncio.sleep(0)\n"
        "time.sleep(60)\n"
    )
    outcome = await _run_with_big_results(workspace, code, max_message_bytes=4 * MIB)
    assert outcome.failure is not None and outcome.failure.kind is OutcomeKind.PROTOCOL, outcome.to_json()
    assert "more than 4194304 bytes of replies the program has not read" in outcome.failure.params["detail"]


@pytest.mark.asyncio
async def test_a_program_reading_large_results_one_at_a_time_is_fine(workspace: Path) -> None:
    code = "total = 0\nfor _ in range(6):\n    total += len(await tools.big())\nreturn total\n"
    outcome = await _run_with_big_results(workspace, code, max_message_bytes=4 * MIB)
    assert outcome.ok, outcome.to_json()
    assert outcome.value == 6 * (2 * MIB - 200)


# -- item 7: the deadline holds over nested calls ------------------------------------------------


@attrs.define
class NapProbe:
    started: asyncio.Event = attrs.Factory(asyncio.Event)
    cancelled: int = 0
    release: asyncio.Event = attrs.Factory(asyncio.Event)
    trace: list[str] = attrs.Factory(list)
    runtime: CodeRuntime | None = None
    big_runs: int = 0
    naps: int = 0


def nap_tools(probe: NapProbe) -> list[ToolDefinition]:
    async def nap(arguments: Any, context: ToolContext) -> Any:
        probe.naps += 1
        probe.started.set()
        try:
            # Never ends by itself: only the run's deadline or abort can settle the call, so no test below
            # needs a wall-clock margin to tell "cancelled at the deadline" from "waited for the body".
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            probe.cancelled += 1
            raise
        return "slept"

    async def stubborn(arguments: Any, context: ToolContext) -> Any:
        # Ignores cancellation: keeps waiting until the test releases it.
        probe.started.set()
        while True:
            try:
                await probe.release.wait()
                return "released"
            except asyncio.CancelledError:
                probe.cancelled += 1

    async def barrier(arguments: Any, context: ToolContext) -> Any:
        probe.trace.append("barrier ran")
        return "ran"

    async def big(arguments: Any, context: ToolContext) -> Any:
        probe.big_runs += 1
        await asyncio.sleep(0)
        return "x" * (2 * MIB)

    return [
        tool("big", big),
        tool("nap", nap),
        tool("stubborn", stubborn),
        tool("barrier", barrier, concurrency=Concurrency.EXCLUSIVE),
    ]


@pytest_asyncio.fixture
async def nap_host(workspace: Path, tmp_path: Path) -> AsyncIterator[Callable[..., Any]]:
    made: list[tuple[ReferenceHost, CodeRuntime, NapProbe]] = []

    async def factory(**limits: Any) -> tuple[Session, NapProbe]:
        probe = NapProbe()
        options: dict[str, Any] = {"policy": "danger-full-access", "warm_spare": False, "grace_s": 0.5, **limits}
        runtime = probe.runtime = CodeRuntime(RunLimits(**options))
        host = ReferenceHost(
            workspace=workspace,
            state_dir=tmp_path / "state",
            tools=[*nap_tools(probe), run_code_definition(runtime=runtime)],
            load_entry_points=False,
            max_parallel=4,
        )
        made.append((host, runtime, probe))
        return await host.start_session(user_id="u", title="t", session_id="s-1"), probe

    yield factory
    for host, runtime, probe in made:
        probe.release.set()
        await runtime.aclose()
        await host.aclose()


async def timed_run(session: Session, code: str, timeout_s: float) -> ToolResult:
    arguments = {"description": "t", "code": code, "timeout_s": timeout_s}
    # A hang guard only, far beyond any deadline under test: before the fix these runs waited for the nap
    # (which now never ends) or for a stubborn body.
    return await asyncio.wait_for(session.call_tool("run_code", arguments), 600)


def nested_events(session: Session) -> dict[str, list[str]]:
    by_id: dict[str, list[str]] = {}
    for event in session.log.events:
        if event.type in ("tool-started", "tool-settled", "tool-abandoned") and ":ptc:" in event.data["call_id"]:
            by_id.setdefault(event.data["call_id"], []).append(event.type)
    return by_id


NAP_THEN_QUEUED = (
    "import asyncio\n"
    "first = asyncio.ensure_future(tools.nap())\n"
    "queued = asyncio.ensure_future(tools.barrier())\n"  # exclusive: waits for nap to drain
    "await first\n"
)


async def _assert_cancelled_at_the_deadline(session: Session, probe: NapProbe) -> None:
    result = await timed_run(session, NAP_THEN_QUEUED, timeout_s=5)
    assert result.status is ResultStatus.ERROR and result.error is not None, result
    assert result.error.data["kind"] == "timeout", result.error
    assert probe.cancelled == 1
    events = nested_events(session)
    assert events["direct-1@s-1:ptc:1"] == ["tool-started", "tool-settled"]
    assert events["direct-1@s-1:ptc:2"] == ["tool-abandoned"]
    assert probe.trace == []  # the queued call never ran
    settled = [
        e.data for e in session.log.events if e.type == "tool-settled" and e.data["call_id"] == "direct-1@s-1:ptc:1"
    ]
    assert settled[0]["result"]["error"]["code"] == "cancelled"


@pytest.mark.asyncio
async def test_timeout_cancels_admitted_nested_calls(nap_host: Callable[..., Any]) -> None:
    session, probe = await nap_host()
    await _assert_cancelled_at_the_deadline(session, probe)


@pytest.mark.asyncio
async def test_timeout_cancels_admitted_nested_calls_under_workspace_write(nap_host: Callable[..., Any]) -> None:
    limits = RunLimits(policy="workspace-write")
    if not (await sandbox.probe(limits.bwrap_path)).available:
        pytest.skip("the workspace-write sandbox is not available here")
    session, probe = await nap_host(policy="workspace-write")
    await _assert_cancelled_at_the_deadline(session, probe)


@pytest.mark.asyncio
async def test_timeout_in_sequential_mode_starts_no_further_call(nap_host: Callable[..., Any]) -> None:
    # PTC_SEQUENTIAL: the second call waits in the runtime's lane for the first; cancelled, it must
    # not go on to the host once the first has ended.
    session, probe = await nap_host(sequential=True)
    code = "import asyncio\nawait asyncio.gather(tools.nap(), tools.nap(), tools.nap())\n"
    result = await timed_run(session, code, timeout_s=5)
    assert result.error is not None and result.error.data["kind"] == "timeout", result
    assert probe.naps == 1
    assert sorted(nested_events(session)) == ["direct-1@s-1:ptc:1"]


@pytest.mark.asyncio
async def test_a_body_that_ignores_cancellation_is_abandoned_and_reported(nap_host: Callable[..., Any]) -> None:
    session, probe = await nap_host()
    result = await timed_run(session, "await tools.stubborn()\n", timeout_s=5)
    assert result.status is ResultStatus.ERROR and result.error is not None, result
    assert result.error.data["kind"] == "timeout"
    assert probe.cancelled >= 1 and not probe.release.is_set()
    notes = result.error.data["notes"]
    assert any("direct-1@s-1:ptc:1" in note and "stubborn" in note for note in notes), notes
    # The host did not wait for the body either: the nested call is settled (cancelled) in its log.
    assert nested_events(session)["direct-1@s-1:ptc:1"] == ["tool-started", "tool-settled"]


@pytest.mark.asyncio
async def test_abort_cancels_admitted_nested_calls(nap_host: Callable[..., Any]) -> None:
    session, probe = await nap_host()
    call = asyncio.ensure_future(timed_run(session, "await tools.nap()\n", timeout_s=60))
    await probe.started.wait()
    # Abort the run the way plugin unload does.
    assert probe.runtime is not None
    await probe.runtime.aclose()
    result = await call
    assert result.status is ResultStatus.ERROR and result.error is not None
    assert result.error.data["kind"] == "abort", result.error
    assert probe.cancelled == 1
    assert nested_events(session)["direct-1@s-1:ptc:1"] == ["tool-started", "tool-settled"]


@pytest.mark.asyncio
async def test_a_flood_of_unread_calls_stops_when_the_run_ends(nap_host: Callable[..., Any]) -> None:
    # Through the reference host (4 bodies at a time): the program queues 100 calls of a 2 MB result and
    # never reads. The run ends with protocol at the third reply, and its nested calls are cancelled
    # with it: the host does not go on admitting queued ones while the process is stopped.
    session, probe = await nap_host(max_message_bytes=4 * MIB)
    code = (
        "import asyncio, time\n"
        "calls = [asyncio.ensure_future(tools.big()) for _ in range(100)]\n"
        "await asyncio.sleep(0)\n"
        "time.sleep(60)\n"
    )
    result = await timed_run(session, code, timeout_s=30)
    assert result.error is not None and result.error.data["kind"] == "protocol", result
    assert probe.big_runs < 16, probe.big_runs
    events = nested_events(session)
    # How many of the 100 call frames the host read before the third reply ended the run depends on
    # scheduling (on a loaded machine as few as 2): what must hold is that hardly any of them ran.
    assert 1 <= len(events) <= 100, len(events)
    assert len(events) - sum(kinds == ["tool-abandoned"] for kinds in events.values()) < 16, events


# -- item 9: bounded value checks -----------------------------------------------------------------


@pytest.mark.asyncio
async def test_a_done_frame_of_millions_of_empty_lists_is_invalid_output(workspace: Path, tmp_path: Path) -> None:
    # 2.5 million empty lists in 7.5 MB: before, decoded and re-checked in full (hundreds of MB, seconds);
    # now refused from a scan of the raw bytes, before anything is decoded.
    raw = tmp_path / "lists.json"
    raw.write_bytes(b"[" + b"[]," * 2_500_000 + b"[]]")
    tracemalloc.start()
    try:
        outcome = await run_crafted(workspace, f"done-raw:{raw}", max_message_bytes=8 * MIB)
        _current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert outcome.failure is not None and outcome.failure.kind is OutcomeKind.INVALID_OUTPUT, outcome.to_json()
    assert "JSON values" in outcome.failure.params["detail"]
    assert peak < 64 * MIB, peak


@pytest.mark.asyncio
async def test_call_arguments_of_millions_of_values_are_invalid_output(workspace: Path, tmp_path: Path) -> None:
    raw = tmp_path / "args.json"
    raw.write_bytes(b'{"rows":[' + b"1," * 3_000_000 + b"1]}")
    outcome = await run_crafted(workspace, f"call-raw:{raw}", timeout=10, max_message_bytes=8 * MIB)
    assert outcome.failure is not None and outcome.failure.kind is OutcomeKind.INVALID_OUTPUT, outcome.to_json()
    assert outcome.calls == 0


@pytest.mark.asyncio
async def test_call_arguments_nested_too_deep_are_invalid_output(workspace: Path, tmp_path: Path) -> None:
    raw = tmp_path / "deep.json"
    raw.write_bytes(b'{"a":' + b"[" * 300 + b"]" * 300 + b"}")
    outcome = await run_crafted(workspace, f"call-raw:{raw}", timeout=10, max_message_bytes=8 * MIB)
    assert outcome.failure is not None and outcome.failure.kind is OutcomeKind.INVALID_OUTPUT, outcome.to_json()
    assert "nested deeper than 128" in outcome.failure.params["detail"]
    assert outcome.calls == 0


@pytest.mark.asyncio
async def test_brackets_and_commas_inside_strings_are_not_values(workspace: Path, tmp_path: Path) -> None:
    # The cheap count over-counts what is inside strings; the exact count must not refuse this.
    raw = tmp_path / "text.json"
    raw.write_bytes(b'["' + b"[{,:" * 1_000_000 + b'", "\\"[,"]')
    outcome = await run_crafted(workspace, f"done-raw:{raw}", max_message_bytes=8 * MIB)
    assert outcome.ok, outcome.to_json()
    assert outcome.value == ["[{,:" * 1_000_000, '"[,']


# Text that looks like structure, and escapes, inside strings: what the node count must see through.
_tricky_text = st.text(alphabet='[]{},:"\\ \nab\u00e9', max_size=12)
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63)
    | st.floats(allow_nan=False, allow_infinity=False)
    | _tricky_text,
    lambda children: st.lists(children, max_size=6) | st.dictionaries(_tricky_text, children, max_size=6),
    max_leaves=40,
)


def _nodes(value: Any) -> int:
    if type(value) is list:
        return 1 + sum(_nodes(entry) for entry in value)
    if type(value) is dict:
        return 1 + sum(1 + _nodes(entry) for entry in value.values())
    return 1


@settings(deadline=None)  # a property of the values, not of their speed
@given(json_values, st.booleans(), st.integers(0, 5000))
def test_the_node_count_never_under_counts(value: Any, indent: bool, padding: int) -> None:
    # Padded so that both the cheap count and the one with strings cut out are exercised.
    wrapped = {"pad": [0] * padding, "value": value}
    body = orjson.dumps(wrapped, option=orjson.OPT_INDENT_2 if indent else 0)
    assert values.count_nodes(body, 1 << 30) >= _nodes(wrapped)


def test_counting_nodes_is_linear_on_unterminated_strings() -> None:
    # One string that never closes, full of escaped quotes and commas: a string pattern that may
    # start at any quote would rescan the rest of the frame from each of them (quadratic).
    body = b'["' + b'\\",' * 200_000
    assert values.count_nodes(body, 1 << 30) > 200_000


@settings(deadline=None)  # a property of the values, not of their speed
@given(json_values, st.integers(0, 140))
def test_the_depth_check_agrees_with_the_childs(value: Any, depth: int) -> None:
    for _ in range(depth):
        value = [value]
    try:
        lossless.check(value)
        expected = True
    except lossless.NotLossless:
        expected = False
    try:
        values.check_depth(value)
        actual = True
    except values.NotLossless:
        actual = False
    assert actual == expected


# -- item 11: replies the child cannot hold -------------------------------------------------------


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("payload", "code"),
    [
        # Over the host's limit (memory_bytes / 4): refused by the host with a clear error.
        (lambda: "x" * (100 * MIB), "result-too-large"),
        # Under it, but one astral character makes the child's str four bytes per character: the child
        # cannot decode it, and says so to the program instead of hanging.
        (lambda: "🙂" + "x" * (60 * MIB), "reply-undecodable"),
    ],
    ids=["larger-than-the-child-can-hold", "exhausts-the-childs-memory"],
)
async def test_a_reply_the_child_cannot_hold_fails_the_call_not_the_run(
    workspace: Path, payload: Callable[[], str], code: str
) -> None:
    async def huge(arguments: object, context: object) -> str:
        return payload()

    services = FakeServices(workspace, [tool("huge", huge)])
    runtime = CodeRuntime(limits_with(memory_bytes=256 * MIB))
    program = "try:\n    await tools.huge()\nexcept ToolCallError as error:\n    return [error.tool_name, error.code]\n"
    try:
        lane = NestedLane(services, outer_context(services).call)
        outcome = await runtime.run(
            program, workspace=workspace, tool_names=("huge",), lane=lane, timeout=ResolvedTimeout(seconds=20)
        )
    finally:
        await runtime.aclose()
    assert outcome.ok, outcome.to_json()
    assert outcome.value == ["huge", code]


def test_a_reply_the_child_cannot_decode_fails_that_call(monkeypatch: pytest.MonkeyPatch) -> None:
    frame = frames.encode({"type": "reply", "id": 7, "ok": True, "value": "x" * 5000})
    buffer = frames.FrameBuffer()

    def no_memory(body: object) -> dict[str, Any]:
        raise MemoryError

    monkeypatch.setattr(frames, "decode_text", no_memory)
    items = buffer.feed(frame[:100]) + buffer.feed(frame[100:])
    assert len(items) == 1
    unreadable = items[0]
    assert isinstance(unreadable, frames.Unreadable)
    assert unreadable.id == 7 and unreadable.size == len(frame) - frames.HEADER.size


class _SmallBuffer(bytearray):
    """A buffer that cannot grow past 2500 bytes, as if the program's memory were full."""

    def __iadd__(self, chunk: Any) -> _SmallBuffer:
        if len(self) + len(chunk) > 2500:
            raise MemoryError
        return super().__iadd__(chunk)


def test_a_reply_the_child_cannot_buffer_is_skipped_and_the_stream_stays_in_step(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(frames, "bytearray", _SmallBuffer, raising=False)
    big = frames.encode({"type": "reply", "id": 7, "ok": True, "value": "x" * 5000})
    small = frames.encode({"type": "reply", "id": 8, "ok": True, "value": 1})
    buffer = frames.FrameBuffer()
    stream = big + small
    items: list[Any] = []
    for offset in range(0, len(stream), 1000):
        items += buffer.feed(stream[offset : offset + 1000])
    assert [type(item) for item in items] == [frames.Unreadable, dict]
    assert items[0].id == 7 and items[0].size == len(big) - frames.HEADER.size
    assert items[1] == {"type": "reply", "id": 8, "ok": True, "value": 1}
