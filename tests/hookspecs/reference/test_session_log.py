"""The JSONL session log: crash recovery (a real SIGKILL mid-append), corruption, locking, faithful resume."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import orjson
import pytest

from hookspecs import (
    ContextMessage,
    HostServices,
    SessionRecord,
    StepInfo,
    ToolContext,
    ToolDefinition,
    ToolSpec,
    hookimpl,
)
from hookspecs.reference import AssistantTurn, HostError, ReferenceHost, RequestedCall, ScriptedModel
from hookspecs.reference.session_log import SessionLog, open_elsewhere, read_events

CRASHING_WRITER = textwrap.dedent(
    """
    import asyncio, os, signal, sys
    from pathlib import Path

    import orjson

    from hookspecs import SessionRecord, ToolDefinition, ToolSpec
    from hookspecs.reference import AssistantTurn, ReferenceHost, RequestedCall, ScriptedModel


    async def echo(arguments, context):
        return {"echo": arguments["text"]}


    async def main(workspace: str, cut: int) -> None:
        tools = [ToolDefinition(spec=ToolSpec(name="echo", description="Echo."), handler=echo)]
        host = ReferenceHost(workspace=Path(workspace), tools=tools, load_entry_points=False)
        model = ScriptedModel([
            AssistantTurn(tool_calls=(RequestedCall(call_id="c1", tool="echo", arguments={"text": "hi"}),)),
            AssistantTurn(text="done"),
        ])
        session = await host.start_session(model=model, session_id="s-crash")
        host.services.append_record(session.agent, SessionRecord(kind="crash/v1", payload={"n": 1}))
        await session.run_turn("before the crash")
        event = {"v": 1, "seq": len(session.log.events), "type": "user-message", "data": {"turn": 2, "text": "lost"}}
        line = orjson.dumps(event, option=orjson.OPT_SORT_KEYS) + b"\\n"
        torn = line[:cut] if cut > 0 else line[: len(line) + cut]
        fd = os.open(session.log.path, os.O_WRONLY | os.O_APPEND)
        os.write(fd, torn)  # the process dies in the middle of its next append
        sys.stdout.write(torn.hex() + "\\n")
        sys.stdout.flush()
        os.kill(os.getpid(), signal.SIGKILL)


    asyncio.run(main(sys.argv[1], int(sys.argv[2])))
    """
)


def echo_tool() -> ToolDefinition:
    async def echo(arguments: Any, context: ToolContext) -> Any:
        return {"echo": arguments["text"]}

    return ToolDefinition(spec=ToolSpec(name="echo", description="Echo."), handler=echo)


def crash_mid_append(workspace: Path, tmp_path: Path, cut: int) -> bytes:
    """Run a real process that appends events, writes part of one more line and SIGKILLs itself."""
    script = tmp_path / "crashing_writer.py"
    script.write_text(CRASHING_WRITER)
    proc = subprocess.run(
        [sys.executable, str(script), str(workspace), str(cut)], capture_output=True, text=True, check=False
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    return bytes.fromhex(proc.stdout.strip())


@pytest.mark.asyncio
@pytest.mark.parametrize("cut", [1, 40, -1], ids=["one-byte", "mid-line", "all-but-newline"])
async def test_resume_after_a_process_killed_mid_append_keeps_every_earlier_event(
    make_reference_host: Callable[..., ReferenceHost], reference_workspace: Path, tmp_path: Path, cut: int
) -> None:
    torn = crash_mid_append(reference_workspace, tmp_path, cut)
    path = reference_workspace / ".agent-host" / "sessions" / "s-crash.jsonl"
    blob = path.read_bytes()
    assert blob.endswith(torn) and not blob.endswith(b"\n")
    complete = blob[: len(blob) - len(torn)]
    expected = [orjson.loads(line) for line in complete.splitlines()]
    assert [e["type"] for e in expected][:2] == ["session-started", "record"]
    # The turn settled, and with it the family (contract 1.2): the settlement is the last complete event.
    assert [e["type"] for e in expected][-2:] == ["turn-settled", "family-settled"]

    async with make_reference_host(tools=[echo_tool()]) as host:
        session = await host.resume_session("s-crash", model=ScriptedModel([AssistantTurn(text="after")]))
        replayed = [{"v": e.v, "seq": e.seq, "type": e.type, "data": e.data} for e in session.log.events]
        assert replayed == expected
        assert session.turn == 1
        assert [r.payload for r in session.records] == [{"n": 1}]
        assert "lost" not in str(session.surface.messages())
        # The torn tail is reported and its bytes are kept aside, not deleted.
        aside = path.with_name(f"{path.name}.torn-{len(complete)}")
        assert session.log.torn is not None and session.log.torn.moved_to == aside
        assert (session.log.torn.offset, session.log.torn.size) == (len(complete), len(torn))
        assert session.diagnostics == [session.log.torn.describe()]
        assert str(aside) in session.diagnostics[0]
        assert aside.read_bytes() == torn
        assert path.read_bytes() == complete
        await session.run_turn("after the crash")
        count = len(session.log.events)
    reopened = SessionLog.open(path, create=False)
    try:
        assert reopened.torn is None and len(reopened.events) == count
    finally:
        reopened.close()


@pytest.mark.asyncio
async def test_a_second_torn_tail_at_the_same_offset_does_not_overwrite_the_first(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    log = SessionLog.open(path, create=True)
    log.append("a", {})
    log.close()
    good = path.read_bytes()
    for torn in (b'{"first', b'{"second'):
        path.write_bytes(good + torn)
        reopened = SessionLog.open(path, create=False)
        reopened.close()
        assert reopened.torn is not None and reopened.torn.moved_to.read_bytes() == torn
    kept = sorted(p.read_bytes() for p in tmp_path.glob("s.jsonl.torn-*"))
    assert kept == [b'{"first', b'{"second']


@pytest.mark.asyncio
async def test_a_corrupt_line_in_the_middle_is_refused_not_repaired(
    make_reference_host: Callable[..., ReferenceHost],
) -> None:
    async with make_reference_host() as host:
        session = await host.start_session(model=ScriptedModel([AssistantTurn(text="a"), AssistantTurn(text="b")]))
        await session.run_turn("one")
        await session.run_turn("two")
        sid, path = session.agent.session_id, session.log.path
    lines = path.read_bytes().splitlines(keepends=True)
    lines[2] = b'{"v": 1, "seq": 2, "type": "user-mess\n'
    path.write_bytes(b"".join(lines))
    before = path.read_bytes()
    async with make_reference_host() as host:
        with pytest.raises(HostError) as excinfo:
            await host.resume_session(sid)
    assert excinfo.value.code == "HOST-0104"
    assert excinfo.value.params["seq"] == 2
    assert path.read_bytes() == before  # nothing truncated or moved
    assert not list(path.parent.glob("*.torn-*"))
    # The failed open released its lock: a second try reports the corruption again, not HOST-0102.
    with pytest.raises(HostError) as again:
        SessionLog.open(path, create=False)
    assert again.value.code == "HOST-0104"


@pytest.mark.asyncio
async def test_a_second_opener_of_a_live_log_is_refused(make_reference_host: Callable[..., ReferenceHost]) -> None:
    async with make_reference_host() as first:
        session = await first.start_session()
        async with make_reference_host() as second:
            with pytest.raises(HostError) as excinfo:
                await second.resume_session(session.agent.session_id)
            assert excinfo.value.code == "HOST-0102"
            with pytest.raises(HostError) as direct:
                SessionLog.open(session.log.path, create=False)
            assert direct.value.code == "HOST-0102"
    async with make_reference_host() as third:  # closed by the first host: free again
        await third.resume_session(session.agent.session_id)


def test_a_second_opener_in_another_process_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    log = SessionLog.open(path, create=True)
    try:
        code = (
            "import sys; from pathlib import Path\n"
            "from hookspecs.reference import HostError\n"
            "from hookspecs.reference.session_log import SessionLog\n"
            "try:\n    SessionLog.open(Path(sys.argv[1]), create=False)\n"
            "except HostError as exc:\n    print(exc.code)\n"
        )
        proc = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=True)
    finally:
        log.close()
    assert proc.stdout.strip() == "HOST-0102"


@pytest.mark.asyncio
async def test_missing_log_and_log_without_start_event(
    make_reference_host: Callable[..., ReferenceHost], reference_workspace: Path
) -> None:
    async with make_reference_host() as host:
        with pytest.raises(HostError) as missing:
            await host.resume_session("s-nope")
        assert missing.value.code == "HOST-0103"
        path = reference_workspace / ".agent-host" / "sessions" / "s-headless.jsonl"
        log = SessionLog.open(path, create=True)
        log.append("user-message", {"turn": 1, "text": "hi"})
        log.close()
        with pytest.raises(HostError) as headless:
            await host.resume_session("s-headless")
        assert headless.value.code == "HOST-0306"
        log = SessionLog.open(path, create=False)  # the failed resume released its lock
        log.close()


@pytest.mark.asyncio
async def test_resume_rebuilds_surface_turn_and_records_equal_to_the_live_ones(
    make_reference_host: Callable[..., ReferenceHost],
) -> None:
    class Plugin:
        @hookimpl
        def agent_host_context_messages(self, step: StepInfo, services: HostServices) -> Sequence[ContextMessage]:
            services.append_record(step.agent, SessionRecord(kind="steps/v1", payload={"at": [step.turn, step.step]}))
            return [ContextMessage(provenance="where", text=f"turn {step.turn} step {step.step}")]

    def call(cid: str, text: str) -> AssistantTurn:
        return AssistantTurn(tool_calls=(RequestedCall(call_id=cid, tool="echo", arguments={"text": text}),))

    model = ScriptedModel(
        [call("a", "1"), AssistantTurn(text="one"), call("b", "2"), AssistantTurn(text="two"), call("c", "3")]
    )
    async with make_reference_host(tools=[echo_tool()], plugins=[Plugin()]) as host:
        session = await host.start_session(model=model)
        await session.run_turn("first")
        session.compact("so far")
        await session.run_turn("second")
        live = (session.surface.entries, session.turn, session.records, session.log.events)
        sid = session.agent.session_id
        next_live = model.requests[-1]
    assert live[1] == 2 and len(live[2]) == 4
    follow_up = ScriptedModel([call("c", "3")])
    async with make_reference_host(tools=[echo_tool()], plugins=[Plugin()]) as host:
        resumed = await host.resume_session(sid, model=follow_up)
        assert (resumed.surface.entries, resumed.turn, resumed.records) == live[:3]
        assert [(e.seq, e.type, e.data) for e in resumed.log.events] == [(e.seq, e.type, e.data) for e in live[3]]
        assert resumed.system_prompt() == next_live.system


def test_a_short_write_is_completed_not_left_torn(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import os as real_os

    from hookspecs.reference import session_log

    log = SessionLog.open(tmp_path / "s.jsonl", create=True)
    log.append("a", {"n": 1})
    calls: list[int] = []

    original = real_os.write

    def short_write(fd: int, data: Any) -> int:
        calls.append(len(data))
        return original(fd, bytes(data[: max(1, len(data) // 3)]))  # the kernel may take less than asked

    monkeypatch.setattr(session_log.os, "write", short_write)
    log.append("b", {"text": "x" * 200})
    monkeypatch.undo()
    log.append("c", {"n": 3})
    log.close()
    assert len(calls) > 1
    reopened = SessionLog.open(tmp_path / "s.jsonl", create=False)
    assert [e.type for e in reopened.events] == ["a", "b", "c"] and reopened.torn is None
    reopened.close()


def test_a_failed_write_is_cut_off_and_later_events_survive(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import os as real_os

    from hookspecs.reference import session_log

    log = SessionLog.open(tmp_path / "s.jsonl", create=True)
    log.append("a", {"n": 1})

    original = real_os.write

    def fail_after_part(fd: int, data: Any) -> int:
        original(fd, bytes(data[:5]))
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(session_log.os, "write", fail_after_part)
    with pytest.raises(HostError) as refused:
        log.append("b", {"n": 2})
    monkeypatch.undo()
    assert refused.value.code == "HOST-0105"
    log.append("c", {"n": 3})  # the half event was cut off, so this one is readable
    log.close()
    reopened = SessionLog.open(tmp_path / "s.jsonl", create=False)
    assert [e.type for e in reopened.events] == ["a", "c"] and reopened.torn is None
    reopened.close()


def test_a_closed_log_leaves_no_lock_file_beside_it(tmp_path: Path) -> None:
    # The workspace is the user's: the writer's lock is the log's own descriptor, not a sidecar file.
    path = tmp_path / "sessions" / "s.jsonl"
    log = SessionLog.open(path, create=True)
    log.append("note", {"n": 1})
    assert sorted(p.name for p in path.parent.iterdir()) == ["s.jsonl"]
    log.close()
    assert sorted(p.name for p in path.parent.iterdir()) == ["s.jsonl"]
    assert [e.data for e in SessionLog.open(path, create=False).events] == [{"n": 1}]


def test_another_hosts_log_is_read_without_touching_it(tmp_path: Path) -> None:
    """Family settlement reads members it has not opened: no lock taken, a torn tail neither kept nor moved."""
    path = tmp_path / "s.jsonl"
    with pytest.raises(HostError) as missing:
        open_elsewhere(path)
    assert missing.value.code == "HOST-0103"
    log = SessionLog.open(path, create=True)
    try:
        log.append("session-started", {"n": 1})
        log.append("user-message", {"turn": 1, "text": "hi"})
        assert open_elsewhere(path)
        with path.open("ab") as fh:
            fh.write(b'{"v": 1, "seq": 2, "ty')  # a write in progress
        before = path.read_bytes()
        assert [e.type for e in read_events(path)] == ["session-started", "user-message"]
        assert path.read_bytes() == before and not list(tmp_path.glob("*.torn-*"))
    finally:
        log.close()
    assert not open_elsewhere(path)
    path.write_bytes(
        b'{"v": 1, "seq": 0, "type": "a", "data": {}}\nnot json\n{"v": 1, "seq": 2, "type": "b", "data": {}}\n'
    )
    with pytest.raises(HostError) as corrupt:
        read_events(path)
    assert corrupt.value.code == "HOST-0104"


def test_nested_and_long_events_are_read_back_not_held(tmp_path: Path) -> None:
    # ADR 0087: a log holds small events of the session itself; nested calls' events and long lines are
    # kept as their place in the file, so 2,000 nested events of 16 KB cost the host next to nothing.
    import tracemalloc

    path = tmp_path / "s.jsonl"
    log = SessionLog.open(path, create=True)
    log.append("user-message", {"turn": 1, "text": "hi"})
    text = "n" * 16_000
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for n in range(2000):
            data = {"call_id": f"o:ptc:{n}", "tool": "t", "parent_call_id": "o", "arguments": {"text": text}}
            log.append("tool-started", data)
        log.append("tool-settled", {"call_id": "o", "parent_call_id": None, "result": {"value": "v" * 100_000}})
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert held < 2 * 1024 * 1024, f"the log holds {held} bytes of 32 MB appended"
    assert len(log.events) == 2002
    assert log.events[1].data["arguments"]["text"] == text and log.events[1].v == 2
    assert log.events[-1].data["result"]["value"] == "v" * 100_000
    live = [(e.seq, e.type, e.data) for e in log.events]
    assert [e.seq for e in log.of_type("tool-started", "tool-settled", nested=False)] == [2001]
    log.close()
    assert [(e.seq, e.type, e.data) for e in log.events] == live  # still readable once closed
    reopened = SessionLog.open(path, create=False)
    try:
        assert [(e.seq, e.type, e.data) for e in reopened.events] == live
        assert reopened.events[1:3] == [log.events[1], log.events[2]]
    finally:
        reopened.close()


def test_an_event_of_an_unknown_version_is_not_valid(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    lines = [
        b'{"v": 1, "seq": 0, "type": "a", "data": {}}',
        b'{"v": 9, "seq": 1, "type": "b", "data": {}}',
        b'{"v": 2, "seq": 2, "type": "c", "data": {}}',
    ]
    path.write_bytes(b"\n".join(lines) + b"\n")
    with pytest.raises(HostError) as raised:
        SessionLog.open(path, create=False)
    assert raised.value.code == "HOST-0104"
    path.write_bytes(b"\n".join(lines[:1] + lines[2:]) + b"\n")
    log = SessionLog.open(path, create=False)
    try:
        assert [(e.v, e.type) for e in log.events] == [(1, "a"), (2, "c")]  # version 1 reads as before
    finally:
        log.close()
