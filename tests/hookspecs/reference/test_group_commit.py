"""Group commit of the session log (ADR 0114): nested calls' starts share writes, and a real SIGKILL of the
host between a call and its commit loses no settled call, nor the start of a call whose body ran."""

from __future__ import annotations

import asyncio
import errno
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import orjson
import pytest

from hookspecs import ToolCall, ToolContext, ToolDefinition, ToolSpec
from hookspecs.reference import HostError, ReferenceHost
from hookspecs.reference.session_log import SessionLog, read_events

BATCH = 8
KILL_AT = 29
"""The call (by index) in whose body, or right after whose result, the host is killed: in the 4th batch."""

CRASHING_HOST = textwrap.dedent(
    """
    import asyncio, os, signal, sys
    from pathlib import Path
    from hookspecs import ToolCall, ToolDefinition, ToolSpec
    from hookspecs.reference import ReferenceHost

    workspace, state, report, mode = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
    BATCH, KILL_AT = {batch}, {kill_at}
    seen = os.open(report, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)

    async def step(arguments, context):
        if mode == "in-body" and arguments["i"] == KILL_AT:
            os.kill(os.getpid(), signal.SIGKILL)  # the call started, its body runs, nothing settled it
        await asyncio.sleep(0)
        return {{"i": arguments["i"]}}

    async def outer(arguments, context):
        parent = context.call

        async def one(i):
            call = ToolCall(call_id=f"{{parent.call_id}}:t:{{i}}", tool="step", arguments={{"i": i}},
                            caller=parent.caller, parent_call_id=parent.call_id)
            result = await context.services.dispatch(call)
            assert result.ok, result
            os.write(seen, (call.call_id + "\\n").encode())  # the caller has this call's result now
            if mode == "after-result" and i == KILL_AT:
                os.kill(os.getpid(), signal.SIGKILL)

        for start in range(0, 64, BATCH):
            await asyncio.gather(*(one(i) for i in range(start, start + BATCH)))
        return {{"done": True}}

    async def main():
        pairs = (("outer", outer), ("step", step))
        tools = [ToolDefinition(spec=ToolSpec(name=n, description=n), handler=h) for n, h in pairs]
        host = ReferenceHost(workspace=Path(workspace), state_dir=Path(state), tools=tools,
                             load_entry_points=False, max_parallel=BATCH)
        async with host:
            session = await host.start_session(user_id="u", title="crash")
            sys.stdout.write(str(session.log.path) + "\\n")
            sys.stdout.flush()
            await session.call_tool("outer", {{}})

    asyncio.run(main())
    """
).format(batch=BATCH, kill_at=KILL_AT)


@pytest.mark.parametrize("mode", ["in-body", "after-result"])
def test_a_host_killed_between_a_call_and_its_commit_loses_no_settled_call(tmp_path: Path, mode: str) -> None:
    workspace, state, report = tmp_path / "ws", tmp_path / "state", tmp_path / "seen.txt"
    workspace.mkdir()
    script = tmp_path / "crashing_host.py"
    script.write_text(CRASHING_HOST)
    proc = subprocess.run(
        [sys.executable, str(script), str(workspace), str(state), str(report), mode],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    events = read_events(Path(proc.stdout.strip()))
    started = [e.data["call_id"] for e in events if e.type == "tool-started" and e.data.get("parent_call_id")]
    settled = {e.data["call_id"]: e for e in events if e.type == "tool-settled" and e.data.get("parent_call_id")}
    seen = report.read_text().split()
    seq_of = {(e.type, e.data.get("call_id")): e.seq for e in events}
    killed = next(c for c in started if c.endswith(f":t:{KILL_AT}"))
    assert len(seen) >= KILL_AT - BATCH  # every earlier batch was handed back before the kill
    for call_id in seen:  # every result the caller had is logged as settled, with its value, after its start
        assert settled[call_id].data["result"]["value"] == {"i": int(call_id.rsplit(":", 1)[1])}
        assert started.count(call_id) == 1
        assert seq_of[("tool-started", call_id)] < settled[call_id].seq
    assert set(settled) <= set(started)
    if mode == "in-body":
        assert killed not in settled and killed not in seen  # its body ran: its start was written before it
    else:
        assert killed in seen and killed in settled


def test_nested_starts_admitted_together_share_one_write(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Eight parallel nested calls: their eight starts go out in fewer writes than one each; every event is
    still logged once, in order, readable by another process's reader."""

    async def step(arguments: Any, context: ToolContext) -> Any:
        await asyncio.sleep(0)
        return arguments["i"]

    async def outer(arguments: Any, context: ToolContext) -> Any:
        parent = context.call
        calls = [
            ToolCall(
                call_id=f"{parent.call_id}:t:{i}",
                tool="step",
                arguments={"i": i},
                caller=parent.caller,
                parent_call_id=parent.call_id,
            )
            for i in range(BATCH)
        ]
        log = context.services._host.session(parent.caller.session_id).log  # type: ignore[attr-defined]
        real_write, writes = os.write, []

        def counting(fd: int, data: Any) -> int:
            if fd == log._fd:
                writes.append(bytes(data).count(b"\n"))
            return real_write(fd, data)

        monkeypatch.setattr(os, "write", counting)
        try:
            results = await asyncio.gather(*(context.services.dispatch(c) for c in calls))
        finally:
            monkeypatch.setattr(os, "write", real_write)
        assert [r.value for r in results] == list(range(BATCH))
        return writes

    async def main() -> list[int]:
        tools = [
            ToolDefinition(spec=ToolSpec(name=n, description=n), handler=h)
            for n, h in (("outer", outer), ("step", step))
        ]
        host = ReferenceHost(workspace=tmp_path, state_dir=tmp_path / "state", tools=tools, load_entry_points=False)
        async with host:
            session = await host.start_session(user_id="u", title="group")
            result = await session.call_tool("outer", {})
            events = read_events(session.log.path)
        nested = [e for e in events if e.data.get("parent_call_id")]
        assert [e.type for e in nested].count("tool-started") == BATCH
        assert [e.type for e in nested].count("tool-settled") == BATCH
        assert [e.seq for e in events] == list(range(len(events)))
        return list(result.value)

    writes = asyncio.run(main())
    assert sum(writes) == 2 * BATCH  # every nested event written once
    assert len(writes) < 2 * BATCH  # and starts shared writes (one per event before group commit)


def test_a_failed_group_write_refuses_every_later_event(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Queued starts were handed out as logged: when their write fails, nothing may follow them in the file
    (a settle without its start); the file keeps what was written before."""
    log = SessionLog.open(tmp_path / "s.jsonl", create=True)
    log.append("session-start", {"n": 0})
    log.append("tool-started", {"call_id": "a", "parent_call_id": "o"}, defer=True)
    log.append("tool-started", {"call_id": "b", "parent_call_id": "o"}, defer=True)
    assert len(read_events(log.path)) == 1  # queued, not written yet

    def full(fd: int, data: Any) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "write", full)
    with pytest.raises(HostError) as failed:
        log.flush()
    assert failed.value.code == "HOST-0105"
    monkeypatch.undo()
    with pytest.raises(HostError):
        log.append("tool-settled", {"call_id": "a", "parent_call_id": "o"})
    log.close()
    assert [e.type for e in read_events(log.path)] == ["session-start"]


FAILING_START_HOST = textwrap.dedent(
    """
    import asyncio, json, sys
    from pathlib import Path
    from hookspecs import ToolCall, ToolDefinition, ToolSpec
    from hookspecs.reference import HostError, ReferenceHost

    workspace, state, mode = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
    ran, summary = [], {}

    async def step(arguments, context):
        ran.append(arguments["i"])
        return arguments["i"]

    async def outer(arguments, context):
        parent = context.call
        calls = [ToolCall(call_id=f"{parent.call_id}:t:{i}", tool="step", arguments={"i": i}, caller=parent.caller,
                          parent_call_id=parent.call_id) for i in range(3)]
        results = await asyncio.gather(*(context.services.dispatch(c) for c in calls))
        summary["nested"] = [[r.call_id, r.error.code if r.error else None, r.dispatched] for r in results]
        return {"done": True}

    async def main():
        pairs = (("outer", outer), ("step", step))
        tools = [ToolDefinition(spec=ToolSpec(name=n, description=n), handler=h) for n, h in pairs]
        host = ReferenceHost(workspace=workspace, state_dir=state, tools=tools, load_entry_points=False)
        async with host:
            session = await host.start_session(user_id="u", title="failing start")
            append = session.append

            def failing(type_, data, **options):
                # A plugin's wrapper (or the session's own bookkeeping) raising for the second nested start:
                # before the log saw it ("before"), or after the log queued it ("after").
                if type_ == "tool-started" and str(data.get("call_id", "")).endswith(":t:1"):
                    if mode == "after":
                        append(type_, data, **options)
                    raise RuntimeError("the wrapper failed")
                return append(type_, data, **options)

            session.append = failing
            try:
                await session.call_tool("outer", {})
                summary["outer"] = "ok"
            except HostError as failed:
                summary["outer"] = failed.code
            summary["path"] = str(session.log.path)
        summary["ran"] = ran
        print(json.dumps(summary))

    asyncio.run(main())
    """
)


@pytest.mark.parametrize("mode", ["before", "after"])
def test_a_nested_start_that_cannot_be_logged_fails_promptly_and_breaks_the_log(tmp_path: Path, mode: str) -> None:
    """An exception from ``session.append`` for a nested call's ``tool-started`` (group commit): the calls fail
    with a typed error, the outer call with HOST-0105, and nothing follows in the log. Before, the lane waited
    for the failed call's commit for ever (the host hung; the timeout below is only a hang guard)."""
    workspace, state = tmp_path / "ws", tmp_path / "state"
    workspace.mkdir()
    script = tmp_path / "failing_start_host.py"
    script.write_text(FAILING_START_HOST)
    proc = subprocess.run(
        [sys.executable, str(script), str(workspace), str(state), mode],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    summary = orjson.loads(proc.stdout)
    codes = {call_id.rsplit(":", 1)[1]: (code, dispatched) for call_id, code, dispatched in summary["nested"]}
    assert codes["1"] == ("not-logged", False)  # never ran
    assert {code for code, _ in codes.values()} == {"not-logged"}  # the others: their starts could not follow
    assert summary["ran"] == []  # no body ran without its start written
    assert summary["outer"] == "HOST-0105"  # the outer call's settle is refused: the caller gets a typed error
    events = read_events(Path(summary["path"]))
    assert [e.type for e in events] == ["session-started", "tool-started"]  # the outer start only; nothing after
    failed = HostError("HOST-0106", tool="step", call_id="c", reason="r")
    assert "step" in failed.message("en") and "step" in failed.message("zh")
