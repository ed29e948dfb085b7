"""Kernel mode of the worker and the host's run of a cell: real worker processes, one kept per kernel."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from hookspecs import JSONValue, ToolContext
from ptc_plus.runtime.lane import NestedLane
from ptc_plus.runtime.launcher import Launcher
from ptc_plus.runtime.outcome import OutcomeKind, RunOutcome
from ptc_plus.runtime.process import WorkerProcess
from ptc_plus.runtime.run import KernelBoot, ProgramRun, ReplHandler, RunRequest
from ptc_plus.runtime.run_limits import ResolvedTimeout

from .conftest import FakeServices, alive, limits_with, outer_context, tool


class Kernel:
    """Drives cells on one kept worker, as the session's kernel does: each cell's ``first_id`` is the
    previous cell's ``next_id``, and the worker a cell keeps is the next cell's."""

    def __init__(self, workspace: Path, services: FakeServices, launcher: Launcher) -> None:
        self.workspace = workspace
        self.services = services
        self.launcher = launcher
        self.worker: WorkerProcess | None = None
        self.next_id = 1
        self.cells = 0

    async def cell(
        self,
        code: str,
        tools: Sequence[str] = ("echo",),
        *,
        drop: Sequence[str] = (),
        bindings: Sequence[tuple[str, str]] | None = None,
        repl: ReplHandler | None = None,
        timeout: float = 60,
    ) -> tuple[RunOutcome, ProgramRun]:
        self.cells += 1
        lane = NestedLane(self.services, outer_context(self.services, f"c{self.cells}").call)
        boot = KernelBoot(
            first_id=self.next_id, drop=tuple(drop), bindings=None if bindings is None else tuple(bindings)
        )
        request = RunRequest(
            code=code,
            workspace=self.workspace,
            tool_names=tuple(tools),
            timeout=ResolvedTimeout(seconds=timeout),
            kernel=boot,
        )
        run = ProgramRun(request, self.launcher, lane, worker=self.worker, repl=repl)
        outcome = await run.execute()
        self.worker = run.kept_worker
        self.next_id = run.next_id if run.kept_worker is not None else 1
        return outcome, run

    async def value(self, code: str, tools: Sequence[str] = ("echo",), **options: Any) -> JSONValue:
        outcome, _ = await self.cell(code, tools, **options)
        assert outcome.ok, outcome.report()
        return outcome.value


@pytest_asyncio.fixture
async def kernel(workspace: Path) -> AsyncIterator[Kernel]:
    release = asyncio.Event()

    async def echo(arguments: Any, context: ToolContext) -> Any:
        return arguments

    async def slow(arguments: Any, context: ToolContext) -> Any:
        await release.wait()
        return "late"

    services = FakeServices(workspace, [tool("echo", echo), tool("other", echo), tool("slow", slow)])
    launcher = Launcher(limits_with(grace_s=2.0))
    made = Kernel(workspace, services, launcher)
    yield made
    release.set()
    if made.worker is not None:
        await made.worker.stop(2.0)
    await launcher.aclose()


@pytest.mark.asyncio
async def test_names_persist_across_cells_on_one_worker(kernel: Kernel) -> None:
    assert await kernel.value("x = 41\ndef f():\n    return x + 1\nclass K:\n    n: int = 2\nimport json\n") is None
    first = kernel.worker
    assert first is not None and alive(first.pid)
    assert await kernel.value("x += 1\nf() + K.n + len(json.dumps([]))") == 47
    assert kernel.worker is first


@pytest.mark.asyncio
async def test_return_and_the_trailing_expression_are_the_value(kernel: Kernel) -> None:
    assert await kernel.value("y = 3\nif y:\n    return y * 2\n") == 6
    assert await kernel.value("y + 1") == 4


@pytest.mark.asyncio
async def test_a_function_from_an_earlier_cell_sees_this_cells_tools(kernel: Kernel) -> None:
    code = "async def g():\n    return [sorted(tools), await tools.other(n=1)]\n"
    await kernel.value(code, ("echo",))
    assert await kernel.value("await g()", ("echo", "other")) == [["echo", "other"], {"n": 1}]


@pytest.mark.asyncio
async def test_dropped_names_are_deleted_before_the_cell(kernel: Kernel) -> None:
    await kernel.value("a = 1\nb = 2\n")
    assert await kernel.value("[name in globals() for name in ('a', 'b')]", drop=("a", "missing")) == [False, True]
    # Names the kernel provides come back even when a hidden cell's references drop them.
    value = await kernel.value(
        "[sorted(tools), repl is not None, ToolCallError.__name__]", drop=("tools", "repl", "ToolCallError")
    )
    assert value == [["echo"], True, "ToolCallError"]


@pytest.mark.asyncio
async def test_a_held_tool_reference_does_not_reach_a_tool_this_cell_lacks(kernel: Kernel) -> None:
    await kernel.value("t = tools.echo\nawait t(v=1)", ("echo",))
    dispatched = len(kernel.services.dispatched)
    before = kernel.next_id
    code = (
        "try:\n    await t(v=2)\nexcept ToolCallError as error:\n    return [error.code, error.tool_name, str(error)]\n"
    )
    code_value = await kernel.value(code, ("other",))
    assert isinstance(code_value, list)
    assert code_value[:2] == ["tool-unavailable", "echo"]
    assert "not in this cell's tools" in code_value[2]
    # Refused in the worker: no frame, no id used, nothing dispatched.
    assert len(kernel.services.dispatched) == dispatched
    assert kernel.next_id == before


@pytest.mark.asyncio
async def test_request_ids_continue_across_cells(kernel: Kernel) -> None:
    await kernel.value("await tools.echo(i=1)\nawait tools.echo(i=2)")
    assert kernel.next_id == 3
    # The host checks every id against its expected one: a cell restarting at 1 would be a protocol breach.
    await kernel.value("[await tools.echo(i=3), await tools.echo(i=4)]")
    assert kernel.next_id == 5


@pytest.mark.asyncio
async def test_a_request_left_pending_by_a_finished_cell_fails_and_new_ones_are_refused(kernel: Kernel) -> None:
    code = (
        "import asyncio\n"
        "async def late():\n"
        "    codes = []\n"
        "    for _ in range(2):\n"
        "        try:\n"
        "            await tools.slow()\n"
        "        except ToolCallError as error:\n"
        "            codes.append(error.code)\n"
        "    return codes\n"
        "task = asyncio.ensure_future(late())\n"
        "await asyncio.sleep(0)\n"
    )
    await kernel.value(code, ("slow",))
    # The first call was pending at ``done`` (failed then), the second was made between cells (refused).
    assert await kernel.value("await task", ("slow",)) == ["no-cell", "no-cell"]
    assert len([call for call in kernel.services.dispatched if call.tool == "slow"]) == 1


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("code", "kind"),
    [
        ("sum(range(100))", None),
        ("import sys\nsys.path.insert(0, '.')\nimport given_module\ngiven_module.X", None),
        (
            "import json, re, collections\nimport decimal, fractions, statistics\njson.dumps(re.findall('a', 'aa'))",
            None,
        ),
        ("print('hello')\nimport logging\nlogging.getLogger('x').warning('w')\nopen('given.txt').read()", None),
        ("with open('out.txt', 'w') as handle:\n    handle.write('x')\n", "file-write"),
        ("import os\nos.makedirs('d', exist_ok=True)\n", "file-write"),
        ("import subprocess\ndone = subprocess.run(['true'])\n", "subprocess"),
        (
            "import socket\nwith socket.socket() as s:\n    try:\n        s.connect(('127.0.0.1', 1))\n"
            "    except OSError:\n        pass\n",
            "socket",
        ),
        ("import ctypes\npid = ctypes.CDLL(None).getpid()\n", "ctypes"),
    ],
)
async def test_the_first_os_touching_event_of_a_cell_is_reported(
    kernel: Kernel, workspace: Path, code: str, kind: str | None
) -> None:
    (workspace / "given.txt").write_text("read, not written")
    (workspace / "given_module.py").write_text("X = 1\n")  # importing it must not write a bytecode cache
    outcome, _ = await kernel.cell(code)
    assert outcome.ok, outcome.report()
    assert (outcome.volatile[0] if outcome.volatile else None) == kind, outcome.volatile
    # The next cell starts clean.
    after, _ = await kernel.cell("1")
    assert after.volatile is None


@pytest.mark.asyncio
async def test_volatility_keeps_the_first_event_and_is_reported_for_a_failing_cell(kernel: Kernel) -> None:
    code = "import subprocess\nopen('f.txt', 'w').close()\ndone = subprocess.run(['true'])\n1 / 0\n"
    outcome, run = await kernel.cell(code)
    assert outcome.failure is not None and outcome.failure.kind is OutcomeKind.EXCEPTION
    assert outcome.volatile is not None and outcome.volatile[0] == "file-write"
    assert "f.txt" in outcome.volatile[1]
    assert run.kept_worker is not None


@pytest.mark.asyncio
async def test_tracebacks_point_at_the_cells_lines(kernel: Kernel) -> None:
    outcome, _ = await kernel.cell("x = 1\ny = 2\n1 / 0\n")
    assert outcome.failure is not None and outcome.failure.traceback is not None
    assert 'File "<program>", line 3, in <module>' in outcome.failure.traceback
    assert "1 / 0" in outcome.failure.traceback


@pytest.mark.asyncio
async def test_a_function_from_an_earlier_cell_shows_its_own_line(kernel: Kernel) -> None:
    await kernel.value("def broken():\n    return {}['missing']\n")
    outcome, _ = await kernel.cell("x = 1\nbroken()\n")
    assert outcome.failure is not None and outcome.failure.traceback is not None
    trace = outcome.failure.traceback
    assert "line 2, in <module>\n    broken()\n" in trace
    assert "line 2, in broken\n    return {}['missing']\n" in trace


@pytest.mark.asyncio
async def test_bindings_are_loaded_before_the_cell_and_a_failing_one_is_named(kernel: Kernel) -> None:
    bindings = [("helpers", "def double(x):\n    return 2 * x\n"), ("more", "TRIPLE = double(1) + 1\n")]
    assert await kernel.value("double(4) + TRIPLE", bindings=bindings) == 11
    assert await kernel.value("double(5)") == 10  # loaded once, kept in the namespace
    outcome, run = await kernel.cell("1", bindings=[("broken", "raise ValueError('nope')\n")])
    assert outcome.failure is not None and outcome.failure.kind is OutcomeKind.EXCEPTION
    assert outcome.failure.params["type"] == "BindingError"
    assert "'broken'" in outcome.failure.params["message"]
    assert "ValueError: nope" in outcome.failure.params["message"]
    assert run.kept_worker is not None


@pytest.mark.asyncio
async def test_repl_frames_reach_the_handler_and_its_answers_come_back(kernel: Kernel) -> None:
    seen: list[tuple[str, str | None, tuple[str, str] | None]] = []

    def handler(op: str, name: str | None, volatile: tuple[str, str] | None) -> tuple[bool, JSONValue]:
        seen.append((op, name, volatile))
        if op == "restore":
            return False, {"code": "PTC-R003", "message": "no such state"}
        return True, {"op": op, "name": name}

    code = (
        "saved = await repl.save('s1')\n"
        "listed = await repl.list()\n"
        "try:\n"
        "    await repl.restore('zz')\n"
        "except ReplError as error:\n"
        "    refused = [error.code, error.message, isinstance(error, Exception)]\n"
        "open('w.txt', 'w').close()\n"
        "await repl.delete('s1')\n"
        "[saved, listed, refused]\n"
    )
    value = await kernel.value(code, repl=handler)
    assert value == [{"op": "save", "name": "s1"}, {"op": "list", "name": None}, ["PTC-R003", "no such state", True]]
    assert [entry[:2] for entry in seen] == [("save", "s1"), ("list", None), ("restore", "zz"), ("delete", "s1")]
    assert seen[0][2] is None
    delete_volatile = seen[3][2]
    assert delete_volatile is not None and delete_volatile[0] == "file-write"
    # State operations share the request ids with calls.
    assert kernel.next_id == 5
    bad = "try:\n    await repl.save('')\nexcept ReplError as error:\n    return error.code\n"
    assert await kernel.value(bad, repl=handler) == "invalid-name"


@pytest.mark.asyncio
async def test_a_repl_frame_without_a_handler_is_a_protocol_violation(kernel: Kernel) -> None:
    outcome, run = await kernel.cell("await repl.list()")
    assert outcome.failure is not None and outcome.failure.kind is OutcomeKind.PROTOCOL
    assert run.kept_worker is None


@pytest.mark.asyncio
async def test_a_timeout_stops_the_kernel(kernel: Kernel) -> None:
    await kernel.value("x = 1")
    first = kernel.worker
    assert first is not None
    outcome, run = await kernel.cell("import time\ntime.sleep(600)\n", timeout=1)
    assert outcome.failure is not None and outcome.failure.kind is OutcomeKind.TIMEOUT
    assert run.kept_worker is None
    assert not first.alive


@pytest.mark.asyncio
async def test_the_kernel_exits_when_the_host_closes_the_channel(kernel: Kernel) -> None:
    await kernel.value("x = 1")
    worker = kernel.worker
    assert worker is not None
    worker.channel.close_writer()
    assert await worker.wait_exit(30)
    assert worker.proc.returncode == 0
    kernel.worker = None
    await worker.stop(1.0)


@pytest.mark.asyncio
async def test_a_one_shot_run_has_no_repl_and_no_volatility(kernel: Kernel, workspace: Path) -> None:
    lane = NestedLane(kernel.services, outer_context(kernel.services).call)
    code = "open('x.txt', 'w').close()\n'repl' in globals()"
    request = RunRequest(code=code, workspace=workspace, tool_names=(), timeout=ResolvedTimeout(seconds=60))
    run = ProgramRun(request, kernel.launcher, lane)
    outcome = await run.execute()
    assert outcome.ok and outcome.value is False
    assert outcome.volatile is None
    assert run.kept_worker is None


@pytest.mark.asyncio
@pytest.mark.parametrize("policy", ["danger-full-access", "workspace-write"])
async def test_a_cells_processes_end_with_it_and_the_kernel_stays(workspace: Path, policy: str) -> None:
    launcher = Launcher(limits_with(grace_s=2.0, policy=policy))
    kernel = Kernel(workspace, FakeServices(workspace, []), launcher)
    try:
        code = "import subprocess\nsleeper = subprocess.Popen(['sleep', '600'])\nsleeper.poll() is None"
        assert await kernel.value(code, ()) is True
        worker = kernel.worker
        assert worker is not None and worker.alive
        assert await kernel.value("sleeper.wait(timeout=60) is not None", ()) is True
        assert kernel.worker is worker and worker.alive
    finally:
        if kernel.worker is not None:
            await kernel.worker.stop(2.0)
        await launcher.aclose()
