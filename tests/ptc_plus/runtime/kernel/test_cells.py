"""The kernel end to end on the reference host: state across cells, recovery by replay without
re-dispatch, volatility, state operations, notices, provenance and a damaged journal."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import attrs
import orjson
import pytest
import pytest_asyncio

from hookspecs import CompactionInfo, JSONObject, JSONValue, ToolContext, ToolResult, tool
from hookspecs.reference import ReferenceHost
from ptc_plus.config import WORKSPACE_DIR
from ptc_plus.runtime import CodeRuntime, DirectoryStore, KernelCell, KernelMode, RunLimits, run_code_definition
from ptc_plus.session.repl_journal import SessionRecordsJournal, hide_compacted_cells

pytestmark = pytest.mark.asyncio


class Tools:
    """Host tools that count their dispatches: the proof that replay dispatches nothing."""

    def __init__(self) -> None:
        self.dispatched: list[str] = []
        self.notes: list[str] = []

    def definitions(self) -> list[Any]:
        @tool(name="notes_add", description="Store a note; returns how many notes there are.")
        async def notes_add(arguments: JSONObject, context: ToolContext) -> JSONValue:
            self.dispatched.append("notes_add")
            self.notes.append(str(arguments["text"]))
            return len(self.notes)

        @tool(name="echo", description="Return the argument.")
        async def echo(arguments: JSONObject, context: ToolContext) -> JSONValue:
            self.dispatched.append("echo")
            return arguments.get("v")

        @tool(name="sleepy", description="Sleep, then return.")
        async def sleepy(arguments: JSONObject, context: ToolContext) -> JSONValue:
            self.dispatched.append("sleepy")
            await asyncio.sleep(float(arguments.get("s", 5)))
            return "woke"

        return [notes_add, echo, sleepy]


@attrs.define
class Rig:
    """One host session whose ``run_code`` runs kernel cells journalled in ``journal``."""

    workspace: Path
    journal: Path
    tools: Tools
    limits: RunLimits
    runtime: CodeRuntime | None = None
    host: ReferenceHost | None = None
    session: Any = None
    key: str = ""

    async def start(self, state_dir: Path) -> None:
        self.runtime = CodeRuntime(self.limits, owner_paths=(WORKSPACE_DIR,))
        store = DirectoryStore(self.journal)
        self.key = str(store.path)

        def kernel_for(context: ToolContext) -> KernelCell:
            return KernelCell(session=self.key, store=store, call_id=context.call.call_id)

        definition = run_code_definition(runtime=self.runtime, kernel_for=kernel_for)
        self.host = ReferenceHost(
            workspace=self.workspace,
            state_dir=state_dir,
            tools=[*self.tools.definitions(), definition],
            load_entry_points=False,
        )
        await self.host.__aenter__()
        self.session = await self.host.start_session(user_id="u", title="kernel")

    async def restart(self, state_dir: Path) -> None:
        """A new process would see only the journal: a new runtime and host, no live kernel."""
        await self.stop()
        await self.start(state_dir)

    async def stop(self) -> None:
        if self.host is not None:
            await self.host.__aexit__(None, None, None)
        if self.runtime is not None:
            await self.runtime.aclose()

    async def cell(self, code: str, **extra: Any) -> ToolResult:
        result: ToolResult = await self.session.call_tool("run_code", {"description": "cell", "code": code, **extra})
        return result

    async def value(self, code: str) -> Any:
        result = await self.cell(code)
        assert result.ok, result.error
        return result.value["value"]

    def kernel_pid(self) -> int:
        assert self.runtime is not None
        pid = self.runtime.kernel_pid(self.key)
        assert pid is not None
        return pid


@pytest_asyncio.fixture
async def rig(tmp_path: Path) -> AsyncIterator[Rig]:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    limits = RunLimits(kernel=KernelMode.SESSION, timeout_s=30)
    made = Rig(workspace=workspace, journal=tmp_path / "journal", tools=Tools(), limits=limits)
    await made.start(tmp_path / "state")
    yield made
    await made.stop()


def _logs(result: ToolResult) -> str:
    body = result.value if result.ok else result.error.data  # type: ignore[union-attr]
    return "".join(entry["text"] for entry in body["logs"])


async def _killed(pid: int) -> None:
    os.kill(pid, signal.SIGKILL)
    for _ in range(200):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        await asyncio.sleep(0.01)


# -- names across cells, recovery without re-dispatch ------------------------------------------------


async def test_names_survive_between_cells(rig: Rig) -> None:
    await rig.value("x = 41\ndef f(y):\n    return y + 1")
    assert await rig.value("return f(x)") == 42


async def test_kill_between_cells_rebuilds_the_same_state_without_dispatching(rig: Rig, tmp_path: Path) -> None:
    await rig.value("n = await tools.notes_add(text='milk')\nseen = await tools.echo(v=[1, 2])")
    await rig.value("total = n + len(seen)")
    dispatched = list(rig.tools.dispatched)
    await _killed(rig.kernel_pid())
    assert await rig.value("return [n, seen, total]") == [1, [1, 2], 3]
    assert rig.tools.dispatched == dispatched  # nothing ran again during replay
    assert rig.tools.notes == ["milk"]
    recovery = rig.runtime.recovery(rig.key)  # type: ignore[union-attr]
    assert recovery is not None and recovery.cold and recovery.replayed == 2 and recovery.skipped == 0


async def test_a_refused_value_does_not_cost_the_state(rig: Rig) -> None:
    refused = await rig.cell("x = 5\nreturn object()")
    assert not refused.ok and refused.error.data["kind"] == "invalid-output"  # type: ignore[union-attr]
    await _killed(rig.kernel_pid())
    assert await rig.value("return x") == 5  # the cell ran to its end: it was replayed
    assert rig.runtime.recovery(rig.key).skipped == 0  # type: ignore[union-attr]


async def test_a_new_runtime_recovers_from_the_journal_alone(rig: Rig, tmp_path: Path) -> None:
    await rig.value("n = await tools.notes_add(text='a')")
    await rig.restart(tmp_path / "state2")
    assert await rig.value("return n") == 1
    assert rig.tools.notes == ["a"]


# -- volatility and state operations -----------------------------------------------------------------


async def test_a_file_write_makes_the_kernel_volatile_and_save_refuses_with_the_reason(rig: Rig) -> None:
    await rig.value("x = 1\nawait repl.save('one')")
    await rig.value("open('out.txt', 'w').write('hi')\ny = 2")
    refused = await rig.value(
        "try:\n    await repl.save('two')\nexcept ReplError as e:\n    return [e.code, str(e)]\nreturn None"
    )
    assert refused[0] == "PTC-R004"
    assert "file" in refused[1]
    listed = await rig.value("return await repl.list()")
    assert listed["mode"] == "volatile" and listed["names"] == ["one"]
    assert "file" in listed["volatile_reason"]
    assert await rig.value("return y") == 2  # the live state was kept
    await rig.value("await repl.restore()")
    assert await rig.value("return [x, 'y' in globals()]") == [1, False]


@pytest.mark.parametrize(
    "effect",
    [
        "import subprocess\nsubprocess.run(['true'])\nNone",
        "import socket\ns = socket.socket()\ntry:\n    s.connect(('127.0.0.1', 9))\nexcept OSError:\n    pass",
    ],
    ids=["subprocess", "socket"],
)
async def test_processes_and_sockets_are_volatile(rig: Rig, effect: str) -> None:
    await rig.value(effect)
    listed = await rig.value("return await repl.list()")
    assert listed["mode"] == "volatile"


async def test_restore_by_name_and_delete(rig: Rig) -> None:
    await rig.value("x = 1\nawait repl.save('start')")
    await rig.value("x = 2")
    await rig.value("await repl.restore('start')")
    assert await rig.value("return x") == 1
    await rig.value("await repl.delete('start')")
    missing = await rig.value(
        "try:\n    await repl.restore('start')\nexcept ReplError as e:\n    return e.code\nreturn None"
    )
    assert missing == "PTC-R005"


# -- contraction notices -----------------------------------------------------------------------------


async def test_volatile_history_contracts_with_one_notice_per_cycle(rig: Rig) -> None:
    await rig.value("a = 1")
    await rig.value("open('f1', 'w').close()\nb = 2")  # volatile: cannot be replayed
    await _killed(rig.kernel_pid())
    first = await rig.cell("c = 3\nopen('f2', 'w').close()")  # contraction 1, itself volatile
    assert first.ok and "PTC-R002" not in str(first.value["value"])
    assert "REPL state was rebuilt" in _logs(first)
    await _killed(rig.kernel_pid())
    second = await rig.cell("return sorted(k for k in ('a', 'b', 'c') if k in globals())")
    assert second.ok and second.value["value"] == ["a"]
    assert "REPL state was rebuilt" not in _logs(second)  # same cycle: not told twice
    await rig.value("d = 4")  # started without a contraction: the cycle ends
    await rig.value("open('f3', 'w').close()")
    await _killed(rig.kernel_pid())
    third = await rig.cell("return a")
    assert "REPL state was rebuilt" in _logs(third)


async def test_divergence_contracts_and_the_notice_follows_a_failed_cells_error(rig: Rig) -> None:
    await rig.value("import time\nstamp = await tools.echo(v=time.time_ns())")  # replay asks other args
    await _killed(rig.kernel_pid())
    failed = await rig.cell("return stamp")
    assert not failed.ok
    message = failed.error.message  # type: ignore[union-attr]
    assert message.index("NameError") < message.index("REPL state was rebuilt")
    assert "REPL state was rebuilt" not in _logs(failed)


async def test_a_discarded_nested_call_is_never_replayed(rig: Rig) -> None:
    await rig.value("before = 1")
    # Fired and not awaited: still running when the cell ends, so it never settles in the cell.
    await rig.value("import asyncio\nt = asyncio.ensure_future(tools.sleepy(s=2))\nawait asyncio.sleep(0.2)\nafter = 2")
    listed = await rig.value("return await repl.list()")
    assert listed["mode"] == "volatile" and "never settled" in listed["volatile_reason"]
    count = rig.tools.dispatched.count("sleepy")
    await _killed(rig.kernel_pid())
    assert await rig.value("return ['before' in globals(), 'after' in globals()]") == [True, False]
    assert rig.tools.dispatched.count("sleepy") == count
    recovery = rig.runtime.recovery(rig.key)  # type: ignore[union-attr]
    assert recovery is not None and recovery.skipped == 2  # the cell with the discarded call, and the list


async def test_a_timeout_stops_the_kernel_and_the_next_cell_contracts(rig: Rig) -> None:
    await rig.value("x = 1")
    timed_out = await rig.cell("y = 2\nwhile True:\n    pass", timeout_s=1)
    assert not timed_out.ok
    assert await rig.value("return [x, 'y' in globals()]") == [1, False]


# -- provenance ----------------------------------------------------------------------------------------


async def test_compacting_away_the_declaring_cell_drops_its_names_with_a_notice(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    tools = Tools()
    runtime = CodeRuntime(RunLimits(kernel=KernelMode.SESSION, timeout_s=30), owner_paths=(WORKSPACE_DIR,))
    holder: dict[str, Any] = {}

    def kernel_for(context: ToolContext) -> KernelCell:
        store = SessionRecordsJournal(holder["services"], context.call.caller)
        return KernelCell(session=context.call.caller.session_id, store=store, call_id=context.call.call_id)

    definition = run_code_definition(runtime=runtime, kernel_for=kernel_for)
    host = ReferenceHost(
        workspace=workspace,
        state_dir=tmp_path / "state",
        tools=[*tools.definitions(), definition],
        load_entry_points=False,
    )
    try:
        async with host:
            session = await host.start_session(user_id="u", title="provenance")
            holder["services"] = host.services
            first = await session.call_tool("run_code", {"description": "x", "code": "x = 1"})
            second = await session.call_tool("run_code", {"description": "y", "code": "y = 2"})
            assert first.ok and second.ok
            hide_compacted_cells(
                host.services, CompactionInfo(agent=session.agent, summary="s", kept_call_ids=(second.call_id,))
            )
            after = await session.call_tool("run_code", {"description": "z", "code": "return ['x' in globals(), y]"})
            assert after.ok and after.value["value"] == [False, 2]
            assert "no longer visible: x" in "".join(e["text"] for e in after.value["logs"])
    finally:
        await runtime.aclose()


# -- a damaged journal -----------------------------------------------------------------------------------


@pytest.mark.parametrize("damage", ["truncate", "garbage", "unknown-field"])
async def test_a_damaged_journal_never_blocks_the_cell(rig: Rig, tmp_path: Path, damage: str) -> None:
    await rig.value("x = 1")
    await rig.value("y = 2")
    await rig.stop()
    path = rig.journal / "journal.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    if damage == "truncate":
        path.write_bytes(b"".join(lines)[:-20])
    elif damage == "garbage":
        path.write_bytes(b"".join(lines[:2]) + b"\x00not json at all\n" + b"".join(lines[2:]))
    else:
        record = orjson.loads(lines[2])
        record["surprise"] = True
        path.write_bytes(b"".join(lines[:2]) + orjson.dumps(record) + b"\n" + b"".join(lines[3:]))
    await rig.start(tmp_path / "state3")
    result = await rig.cell("return sorted(k for k in ('x', 'y') if k in globals())")
    assert result.ok
    kept = result.value["value"]
    assert kept == []  # nothing after unknown damage is provable: an empty kernel
    # The contraction was journalled with the result: the next cold start does not meet the damage again.
    await rig.restart(tmp_path / "state4")
    again = await rig.cell("return sorted(k for k in ('x', 'y') if k in globals())")
    assert again.ok and again.value["value"] == kept
    assert "REPL state was rebuilt" not in _logs(again)


# -- the pool: idle kernels and the cap ----------------------------------------------------------------


async def test_kernels_beyond_the_cap_and_idle_ones_are_stopped_and_recover(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    limits = RunLimits(kernel=KernelMode.SESSION, max_kernels=1, kernel_idle_s=0.5)
    runtime = CodeRuntime(limits, owner_paths=(WORKSPACE_DIR,))
    cells = {name: KernelCell(session=name, store=DirectoryStore(tmp_path / name)) for name in ("a", "b")}
    try:
        first = await runtime.run("x = 'a'", workspace=workspace, kernel=cells["a"])
        assert first.ok and runtime.kernel_pid("a") is not None
        await runtime.run("x = 'b'", workspace=workspace, kernel=cells["b"])
        assert runtime.kernel_pid("a") is None  # least recently used, over the cap of one
        assert runtime.kernel_pid("b") is not None
        again = await runtime.run("return x", workspace=workspace, kernel=cells["a"])
        assert again.value == "a" and runtime.recovery("a").cold  # type: ignore[union-attr]
        await asyncio.sleep(1.0)
        assert runtime.kernel_pid("a") is None  # idle past kernel_idle_s
    finally:
        await runtime.aclose()
