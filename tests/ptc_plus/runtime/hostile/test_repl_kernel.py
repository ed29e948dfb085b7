"""The stateful REPL kernel against hostile programs (issue 25, ADR 0085).

Each cell runs through a real :class:`~ptc_plus.runtime.CodeRuntime` in kernel mode under the
default ``workspace-write`` policy, with its journal in a real session directory. A cell that
should act as a new ``ptc-plus exec --session`` invocation gets a runtime of its own (a cold
start: the kernel is rebuilt from the journal). The host is checked by the guard once the
runtime is closed (a kept kernel lives in the workspace, so it would count as a stray before),
and by what each test reads on the host itself.
"""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import orjson
import pytest
import pytest_asyncio

from hookspecs import JSONObject, JSONValue, ToolContext, tool
from hookspecs.reference import ReferenceHost
from ptc_plus.config import WORKSPACE_DIR
from ptc_plus.runtime import CodeRuntime, DirectoryStore, KernelCell, KernelMode, RunLimits, run_code_definition
from ptc_plus.runtime.descendants import children, descendants
from ptc_plus.runtime.kernel.quiesce import chain, stopped
from ptc_plus.runtime.outcome import RunOutcome
from ptc_plus.runtime.run_limits import ResolvedTimeout

from .conftest import Hostile
from .guard import stray_processes

pytestmark = [pytest.mark.needs_bwrap, pytest.mark.asyncio]

PROLOGUE = """\
import errno, os
MARKER = {marker!r}
WORKSPACE = {workspace!r}
OUTSIDE = {outside!r}
def attempt(fn, *args, **kwargs):
    try:
        fn(*args, **kwargs)
    except OSError as error:
        return errno.errorcode.get(error.errno, str(error.errno))
    return 'allowed'
"""
"""The harness's names without its ctypes (loading a library makes a cell volatile: it would never be replayed)."""


class Session:
    """One kernel session (its journal in ``journal``) whose cells run hostile programs."""

    def __init__(self, hostile: Hostile, journal: Path) -> None:
        self.hostile = hostile
        self.store = DirectoryStore(journal)
        self.key = str(self.store.path)
        self.journal = journal / "journal.jsonl"

    def runtime(self, **limits: Any) -> CodeRuntime:
        options = {
            "kernel": KernelMode.SESSION,
            "warm_spare": False,
            "timeout_s": 60,
            "executor": self.hostile.executor,
            **limits,
        }
        return CodeRuntime(RunLimits(**options), owner_paths=(WORKSPACE_DIR,))

    async def cell(
        self, code: str, runtime: CodeRuntime, *, workspace: Path | None = None, timeout: float = 30.0
    ) -> RunOutcome:
        outcome = await runtime.run(
            self.program(code),
            workspace=workspace or self.hostile.workspace,
            timeout=ResolvedTimeout(seconds=timeout),
            kernel=KernelCell(session=self.key, store=self.store),
        )
        return outcome

    async def invocation(self, code: str, **kwargs: Any) -> RunOutcome:
        """A cell as one ``ptc-plus exec --session`` invocation runs it: a runtime of its own, then the guard."""
        runtime = self.runtime()
        self.hostile.guard.snapshot()
        try:
            outcome = await self.cell(code, runtime, **kwargs)
        finally:
            await runtime.aclose()
        self.check(outcome)
        return outcome

    def check(self, outcome: RunOutcome) -> None:
        escaped = self.hostile.guard.violations(memory_bound=1 << 62)
        if escaped:
            self.hostile.guard.repair()
            pytest.fail(f"ESCAPED: {'; '.join(escaped)} (outcome: {outcome})", pytrace=False)

    def program(self, code: str) -> str:
        hostile = self.hostile
        return (
            PROLOGUE.format(marker=hostile.marker, workspace=str(hostile.workspace), outside=str(hostile.outside))
            + code
        )

    def records(self) -> list[dict[str, Any]]:
        return [orjson.loads(line) for line in self.journal.read_bytes().splitlines() if line.strip()]


def _ok(outcome: RunOutcome) -> Any:
    assert outcome.failure is None, outcome
    return outcome.value


# -- finding 1: a forged journal must not choose the sandbox a replay runs in --------------------------


FORGE = """
import json
path = os.path.join(WORKSPACE, 'session', 'journal.jsonl')
records = [json.loads(line) for line in open(path).read().splitlines() if line.strip()]
for record in records:
    if record.get('type') == 'entered' and record['seq'] == 1:
        record['cwd'] = OUTSIDE
        record['source'] = {payload!r}
with open(path, 'w') as handle:
    handle.write(''.join(json.dumps(record) + '\\n' for record in records))
return 'forged'
"""
"""Rewrite cell 1's record: run in the host directory OUTSIDE, with a source that reads and writes there."""


async def test_a_forged_journal_cannot_bind_a_host_directory(hostile: Hostile) -> None:
    # Issue 25 item 1: the replay ran cell 1 in its *recorded* cwd, bind-mounted read-write.
    session = Session(hostile, hostile.workspace / "session")
    payload = f"open('pwned-{hostile.marker}', 'w').write('x')\nstolen = open('secret.txt').read()"
    assert _ok(await session.invocation("x = 1")) is None
    assert _ok(await session.invocation(FORGE.format(payload=payload))) == "forged"
    assert any(r.get("cwd") == str(hostile.outside) for r in session.records())  # the forgery is in place
    outcome = await session.invocation("return [globals().get('stolen'), os.getcwd()]")
    stolen, cwd = _ok(outcome)
    assert stolen is None and cwd == str(hostile.workspace)
    assert not (hostile.outside / f"pwned-{hostile.marker}").exists()
    assert not any(hostile.marker in name for name in os.listdir(hostile.workspace) if name.startswith("pwned"))


# -- finding 2: one session from two workspaces ---------------------------------------------------------


async def test_a_kernel_of_one_workspace_never_runs_a_cell_of_another(hostile: Hostile) -> None:
    # Issue 25 item 2: workspace B's cell ran in A's live kernel, with A's files writable to it.
    other = hostile.scope / "other-workspace"
    other.mkdir()
    session = Session(hostile, hostile.scope / "session")
    runtime = session.runtime()
    hostile.guard.snapshot()
    try:
        assert _ok(await session.cell("x = 1", runtime)) is None
        code = "open('from-b', 'w').write('b')\nreturn [os.getcwd(), 'x' in globals(), attempt(os.listdir, WORKSPACE)]"
        cwd, inherited, listing = _ok(await session.cell(code, runtime, workspace=other))
    finally:
        await runtime.aclose()
    session.check(RunOutcome())
    assert cwd == str(other)
    assert inherited is False  # A's cell is not replayed into B's kernel either: it was journalled in A
    assert listing == "ENOENT"  # A is not in B's sandbox at all
    assert (other / "from-b").exists() and not (hostile.workspace / "from-b").exists()


# -- finding 6: nothing of a settled cell runs ------------------------------------------------------------


LINGER = """
import threading, time
def spin():
    while True:
        pass
def breed():
    # A new double-forked daemon over and over, each appending to a file: whatever of it outlives the cell.
    while True:
        child = os.fork()
        if child == 0:
            if os.fork() == 0:
                os.setsid()
                while True:
                    with open('beat', 'a') as handle:
                        handle.write('.')
                    time.sleep(0.01)
            os._exit(0)
        os.waitpid(child, 0)
        time.sleep(0.01)
threading.Thread(target=spin, daemon=True).start()
threading.Thread(target=breed, daemon=True).start()
while not os.path.exists('beat'):
    time.sleep(0.01)
kept = 'the cell returned'
"""


def _sandbox(session: Session, runtime: CodeRuntime) -> tuple[int | None, set[int]]:
    """The kernel's interpreter, and every live process below its sandbox but the sandbox's own chain down
    to the interpreter (none without a kernel)."""
    pid = runtime.kernel_pid(session.key)
    if pid is None:
        return None, set()
    interpreter = interpreter_pid(pid, os.path.realpath(sys.executable))
    assert interpreter is not None
    return interpreter, {p for p in descendants(pid) - chain(pid, interpreter) if not _gone(p)}


def interpreter_pid(pid: int, python: str) -> int | None:
    """The shallowest process at or below ``pid`` running ``python``: the kernel's interpreter in its sandbox
    (the processes a cell forks run ``python`` too, deeper down)."""
    level = {pid}
    while level:
        for candidate in sorted(level):
            try:
                if os.readlink(f"/proc/{candidate}/exe") == python:
                    return candidate
            except OSError:
                continue
        level = set().union(*(children(parent) for parent in level))
    return None


def _gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return handle.read().rsplit(b")", 1)[1].split()[0] in (b"Z", b"X")
    except OSError:
        return True


async def test_threads_and_daemons_of_a_settled_cell_do_not_run(hostile: Hostile) -> None:
    # Issue 25 item 6: a spinning thread, threads and a double-forked daemon ran on for kernel_idle_s.
    session = Session(hostile, hostile.scope / "session")
    runtime = session.runtime()
    hostile.guard.snapshot()
    try:
        assert _ok(await session.cell("x = 1", runtime)) is None
        assert _ok(await session.cell(LINGER, runtime)) is None
        # Settled: no process of the cell is alive anywhere on the host, and the kernel is frozen or gone.
        interpreter, others = _sandbox(session, runtime)
        kernel = runtime.kernel_pid(session.key)
        own = chain(kernel, interpreter) if kernel is not None and interpreter is not None else set()
        strays = stray_processes([hostile.marker], [hostile.workspace], exclude=own)
        assert strays == {} and others == set(), (strays, others)
        assert interpreter is None or stopped(interpreter)
        beat = (hostile.workspace / "beat").read_bytes()
        # The next cell (and its recovery) takes its time: nothing wrote to the file meanwhile.
        listed = _ok(await session.cell("return [x, 'kept' in globals(), (await repl.list())['mode']]", runtime))
        assert (hostile.workspace / "beat").read_bytes() == beat
    finally:
        await runtime.aclose()
    session.check(RunOutcome())
    assert listed[0] == 1
    assert listed[1] is False  # its state cannot be kept: the cell is volatile and was not replayed


async def test_a_kernel_is_frozen_between_cells(hostile: Hostile) -> None:
    # A task left on the kernel's event loop needs no thread to go on running between cells.
    session = Session(hostile, hostile.scope / "session")
    runtime = session.runtime()
    hostile.guard.snapshot()
    try:
        code = (
            "import asyncio\nticks = 0\nasync def tick():\n    global ticks\n    while True:\n"
            "        ticks += 1\n        await asyncio.sleep(0)\nkeep = asyncio.ensure_future(tick())\n"
            "await asyncio.sleep(0.01)"
        )
        assert _ok(await session.cell(code, runtime)) is None
        interpreter, others = _sandbox(session, runtime)
        assert interpreter is not None and others == set()
        assert stopped(interpreter)  # every thread of the kernel is stopped while no cell runs
        assert _ok(await session.cell("return ticks > 0", runtime)) is True  # and it runs again in the next
    finally:
        await runtime.aclose()
    session.check(RunOutcome())


# -- finding 5: the journal's size ---------------------------------------------------------------------------


class EchoTools:
    def definitions(self) -> list[Any]:
        @tool(name="echo", description="Return the argument.")
        async def echo(arguments: JSONObject, context: ToolContext) -> JSONValue:
            return arguments.get("v")

        return [echo]


@pytest_asyncio.fixture
async def echo_host(hostile: Hostile) -> AsyncIterator[tuple[Session, Any]]:
    session = Session(hostile, hostile.scope / "session")
    runtime = session.runtime()

    def kernel_for(context: ToolContext) -> KernelCell:
        return KernelCell(session=session.key, store=session.store, call_id=context.call.call_id)

    definition = run_code_definition(runtime=runtime, kernel_for=kernel_for)
    host = ReferenceHost(
        workspace=hostile.workspace,
        state_dir=hostile.scope / "state",
        tools=[*EchoTools().definitions(), definition],
        load_entry_points=False,
    )
    hostile.guard.snapshot()
    try:
        async with host:
            yield session, await host.start_session(user_id="u", title="journal size")
    finally:
        await runtime.aclose()


async def test_huge_nested_calls_make_the_cell_volatile_not_a_huge_journal_line(
    hostile: Hostile, echo_host: tuple[Session, Any]
) -> None:
    # Issue 25 item 5: 30 nested calls of 4 MB each wrote one journal line of 229 MB.
    session, host_session = echo_host
    code = "big = 'z' * 3_000_000\nfor _ in range(4):\n    await tools.echo(v=big)\nreturn (await repl.list())['mode']"
    arguments = {"description": "cell", "code": session.program(code)}
    result = await host_session.call_tool("run_code", arguments)
    assert result.ok, result.error
    assert result.value["value"] == "volatile"
    longest = max(len(line) for line in session.journal.read_bytes().splitlines())
    assert longest < 1024 * 1024, longest
    listed = await host_session.call_tool(
        "run_code", {"description": "cell", "code": "return (await repl.list())['volatile_reason']"}
    )
    assert "too large" in listed.value["value"]


async def test_an_oversized_journal_is_damage_read_nowhere(hostile: Hostile) -> None:
    # Issue 25 item 5: a 378 MB journal took the next invocation past 3 GB of host memory. Here 40 MB of
    # valid records (cells that replay fine): past the cap they are damage all the same.
    session = Session(hostile, hostile.scope / "session")
    assert _ok(await session.invocation("x = 1")) is None
    records = session.journal.read_bytes()
    hidden = orjson.dumps({"v": 1, "type": "hidden", "call_ids": ["c" * 100] * 1000}) + b"\n"
    with session.journal.open("ab") as handle:
        for _ in range(40 * 1024 * 1024 // len(hidden) + 1):
            handle.write(hidden)
    outcome = await session.invocation("return 'x' in globals()")
    assert _ok(outcome) is False  # started empty
    assert any("too large" in note for note in outcome.notes), outcome.notes
    assert (session.journal.parent / "journal.oversized.jsonl").read_bytes().startswith(records)
    assert session.journal.stat().st_size < 64 * 1024  # a fresh journal: the next start does not meet it again
    again = await session.invocation("y = 2\nreturn 'x' in globals()")
    assert _ok(again) is False and not again.notes


# -- finding 7: recovery within the deadline ---------------------------------------------------------------


async def test_a_cold_start_replays_within_the_cells_deadline(hostile: Hostile) -> None:
    # Issue 25 item 7: 7 cells of 2.5 s under a 3 s timeout took 17 s: each replay had a fresh timeout.
    session = Session(hostile, hostile.scope / "session")
    for index in range(3):
        assert _ok(await session.invocation(f"import time\ntime.sleep(2)\nc{index} = {index}")) is None
    runtime = session.runtime()
    hostile.guard.snapshot()
    try:
        # Half of 5 s for recovery: no replay of a 2 s cell after the first fits, whatever the machine's speed.
        outcome = await session.cell(
            "return sorted(k for k in ('c0', 'c1', 'c2') if k in globals())", runtime, timeout=5
        )
        recovery = runtime.recovery(session.key)
    finally:
        await runtime.aclose()
    session.check(outcome)
    kept = _ok(outcome)
    assert recovery is not None and recovery.skipped >= 2 and recovery.replayed <= 2, recovery
    assert kept in ([], ["c0"])
    assert recovery.reason is not None and "ran out of time" in recovery.reason


CASCADE = """
import glob
# The repository decides: once 'replaying' exists, the last cell of the path replays differently each time.
if os.path.exists('replaying') and {index} == {total} - len(glob.glob('pass-*')):
    open('pass-{index}', 'w').close()
c{index} = {index}
"""


async def test_divergences_do_not_walk_the_history_again_and_again(hostile: Hostile) -> None:
    # Issue 25 item 7: each divergence restarted the replay from the first cell (21 replays for 6 cells).
    session = Session(hostile, hostile.scope / "session")
    total = 6
    for index in range(1, total + 1):
        assert _ok(await session.invocation(CASCADE.format(index=index, total=total))) is None
    (hostile.workspace / "replaying").touch()
    runtime = session.runtime()
    hostile.guard.snapshot()
    try:
        outcome = await session.cell("return 1", runtime)
        recovery = runtime.recovery(session.key)
    finally:
        await runtime.aclose()
    session.check(outcome)
    assert _ok(outcome) == 1
    assert recovery is not None and recovery.replayed <= 2 * total - 1, recovery
    assert recovery.kept == 0 and recovery.skipped == total
