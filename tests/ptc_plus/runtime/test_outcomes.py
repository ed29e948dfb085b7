"""One test per outcome kind, each provoked for real in a child process."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest

from hookspecs import ToolContext
from ptc_plus.runtime.lane import NestedLane
from ptc_plus.runtime.outcome import OutcomeKind
from ptc_plus.runtime.run_limits import ResolvedTimeout

from .conftest import FakeServices, RuntimeFactory, alive, outer_context, tool


def _processes_with(marker: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as handle:
                    if marker.encode() in handle.read() and alive(int(entry)):
                        found.append(int(entry))
            except OSError:
                continue
    return found


@pytest.mark.asyncio
async def test_success_returns_value_and_logs(make_runtime: RuntimeFactory, workspace: Path) -> None:
    outcome = await make_runtime().run("print('hi')\nx = await asyncio_sleep()\n", workspace=workspace)
    assert outcome.failure is not None  # asyncio_sleep is undefined: a NameError, not a crash
    outcome = await make_runtime().run(
        "import asyncio\nawait asyncio.sleep(0)\nprint('hi')\n{'a': [1, 2.5]}", workspace=workspace
    )
    assert outcome.ok
    assert outcome.value == {"a": [1, 2.5]}
    assert [(e.stream, e.text) for e in outcome.logs] == [("stdout", "hi\n")]


@pytest.mark.asyncio
async def test_explicit_return_wins_over_trailing_expression(make_runtime: RuntimeFactory, workspace: Path) -> None:
    outcome = await make_runtime().run("if True:\n    return 'early'\n'late'", workspace=workspace)
    assert outcome.value == "early"
    outcome = await make_runtime().run("x = 1", workspace=workspace)
    assert outcome.ok and outcome.value is None


@pytest.mark.asyncio
async def test_exception_has_the_programs_own_traceback(make_runtime: RuntimeFactory, workspace: Path) -> None:
    code = "def helper(n):\n    return 1 / n\n\nvalue = helper(0)\n"
    outcome = await make_runtime().run(code, workspace=workspace)
    assert outcome.failure is not None
    assert outcome.failure.kind is OutcomeKind.EXCEPTION
    assert outcome.failure.params["type"] == "ZeroDivisionError"
    trace = outcome.failure.traceback or ""
    assert '"<program>", line 4, in <module>' in trace and '"<program>", line 2, in helper' in trace
    assert "return 1 / n" in trace
    assert "worker" not in trace and "asyncio" not in trace


@pytest.mark.asyncio
async def test_syntax_error_is_an_exception(make_runtime: RuntimeFactory, workspace: Path) -> None:
    outcome = await make_runtime().run("def (:\n", workspace=workspace)
    assert outcome.failure is not None and outcome.failure.kind is OutcomeKind.EXCEPTION
    assert outcome.failure.params["type"] == "SyntaxError"


@pytest.mark.asyncio
async def test_cpu_bound_loop_is_stopped_by_timeout(make_runtime: RuntimeFactory, workspace: Path) -> None:
    code = "import os\nprint(os.getpid(), flush=True)\nwhile True:\n    pass\n"
    before = _descendants(os.getpid())
    outcome = await make_runtime().run(code, workspace=workspace, timeout=ResolvedTimeout(seconds=0.5))
    assert outcome.failure is not None and outcome.failure.kind is OutcomeKind.TIMEOUT
    # On a loaded machine the deadline may come before the program printed its pid: then no process the run
    # started may be left (its whole tree, whatever it had got to), which is what the pid check proves too.
    if outcome.logs:
        assert not alive(int(outcome.logs[0].text.split()[0]))
    assert _descendants(os.getpid()) <= before


def _descendants(root: int) -> set[int]:
    """The live processes below ``root`` (from /proc), zombies left out."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            status = dict(
                line.split(":\t", 1)
                for line in Path(f"/proc/{entry}/status").read_text(encoding="utf-8").splitlines()
                if ":\t" in line
            )
        except OSError:
            continue
        if status.get("State", "").startswith("Z"):
            continue
        children.setdefault(int(status.get("PPid", "0")), []).append(int(entry))
    found: set[int] = set()
    pending = [root]
    while pending:
        for child in children.get(pending.pop(), []):
            if child not in found:
                found.add(child)
                pending.append(child)
    return found


@pytest.mark.asyncio
async def test_abort_kills_the_process(make_runtime: RuntimeFactory, workspace: Path) -> None:
    started = asyncio.Event()

    async def started_tool(arguments: object, context: ToolContext) -> str:
        started.set()
        return "ok"

    services = FakeServices(workspace, [tool("started", started_tool)])
    lane = NestedLane(services, outer_context(services).call)
    cancelled = asyncio.Event()
    code = "import os\nprint(os.getpid())\nawait tools.started()\nwhile True:\n    pass\n"
    run = asyncio.create_task(
        make_runtime().run(code, workspace=workspace, tool_names=("started",), lane=lane, cancelled=cancelled)
    )
    await started.wait()
    cancelled.set()
    outcome = await run
    assert outcome.failure is not None and outcome.failure.kind is OutcomeKind.ABORT
    assert not alive(int(outcome.logs[0].text.split()[0]))


@pytest.mark.asyncio
async def test_worker_exit_when_the_process_dies(make_runtime: RuntimeFactory, workspace: Path) -> None:
    outcome = await make_runtime().run("import os\nos._exit(3)", workspace=workspace)
    assert outcome.failure is not None and outcome.failure.kind is OutcomeKind.WORKER_EXIT
    assert "3" in outcome.failure.params["detail"]


@pytest.mark.asyncio
async def test_worker_exit_when_the_program_closes_the_channel(make_runtime: RuntimeFactory, workspace: Path) -> None:
    code = "import os, sys, time\nfor fd in sys.argv[2:4]:\n    os.close(int(fd))\ntime.sleep(3600)\n"
    outcome = await make_runtime(grace_s=0.2).run(code, workspace=workspace)
    assert outcome.failure is not None and outcome.failure.kind is OutcomeKind.WORKER_EXIT


@pytest.mark.asyncio
async def test_invalid_output_for_nan(make_runtime: RuntimeFactory, workspace: Path) -> None:
    outcome = await make_runtime().run("return float('nan')", workspace=workspace)
    assert outcome.failure is not None and outcome.failure.kind is OutcomeKind.INVALID_OUTPUT
    assert "nan" in outcome.failure.message()


@pytest.mark.asyncio
async def test_output_limit_when_flooding_stdout(make_runtime: RuntimeFactory, workspace: Path) -> None:
    code = "while True:\n    print('x' * 1000)\n"
    outcome = await make_runtime(max_output_bytes=200_000).run(code, workspace=workspace)
    assert outcome.failure is not None and outcome.failure.kind is OutcomeKind.OUTPUT_LIMIT
    assert sum(len(entry.text) for entry in outcome.logs) <= 200_000


@pytest.mark.asyncio
async def test_output_limit_on_raw_descriptor_writes(make_runtime: RuntimeFactory, workspace: Path) -> None:
    code = "import os\nwhile True:\n    os.write(2, b'y' * 4096)\n"
    outcome = await make_runtime(max_output_bytes=100_000).run(code, workspace=workspace)
    assert outcome.failure is not None and outcome.failure.kind is OutcomeKind.OUTPUT_LIMIT


@pytest.mark.asyncio
async def test_output_limit_for_a_huge_value(make_runtime: RuntimeFactory, workspace: Path) -> None:
    outcome = await make_runtime(max_output_bytes=10_000).run("return 'v' * 20_000", workspace=workspace)
    assert outcome.failure is not None and outcome.failure.kind is OutcomeKind.OUTPUT_LIMIT
    assert outcome.value is None


@pytest.mark.asyncio
async def test_memory_cap_holds(make_runtime: RuntimeFactory, workspace: Path) -> None:
    code = "blocks = []\nwhile True:\n    blocks.append(bytearray(16 * 1024 * 1024))\n"
    outcome = await make_runtime(memory_bytes=256 * 1024 * 1024).run(code, workspace=workspace)
    assert outcome.failure is not None
    assert outcome.failure.kind in (OutcomeKind.EXCEPTION, OutcomeKind.WORKER_EXIT)
    if outcome.failure.kind is OutcomeKind.EXCEPTION:
        assert outcome.failure.params["type"] == "MemoryError"


@pytest.mark.asyncio
async def test_grandchild_does_not_outlive_the_run(make_runtime: RuntimeFactory, workspace: Path) -> None:
    marker = f"ptc-grandchild-{os.getpid()}-{id(workspace)}"
    code = (
        "import subprocess, sys\n"
        f"child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)', '{marker}'])\n"
        "return child.pid\n"
    )
    outcome = await make_runtime().run(code, workspace=workspace)
    assert outcome.ok, outcome.to_json()
    assert not alive(outcome.value)
    assert _processes_with(marker) == []


@pytest.mark.asyncio
@pytest.mark.parametrize("orphaned", [False, True])
async def test_setsid_grandchild_does_not_outlive_an_unconfined_run(
    make_runtime: RuntimeFactory, workspace: Path, orphaned: bool
) -> None:
    # Under danger-full-access there is no PID namespace: a process in its own session escapes
    # killpg, and an orphaned one (its parent gone) is re-parented; both must still die.
    marker = f"ptc-setsid-{os.getpid()}-{id(workspace)}-{orphaned}"
    sleeper = f"[sys.executable, '-c', 'import time; time.sleep(600)', '{marker}']"
    quiet = "start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL"
    middle = f"import subprocess, sys; print(subprocess.Popen({sleeper}, {quiet}).pid)"
    if orphaned:
        spawn = (
            "import subprocess, sys\n"
            f"middle = {middle!r}\n"
            "out = subprocess.run([sys.executable, '-c', middle], capture_output=True, text=True, check=True)\n"
            "return int(out.stdout)\n"
        )
    else:
        spawn = f"import subprocess, sys\nreturn subprocess.Popen({sleeper}, start_new_session=True).pid\n"
    outcome = await make_runtime(policy="danger-full-access").run(spawn, workspace=workspace)
    assert outcome.ok, outcome.to_json()
    assert not alive(outcome.value)
    assert _processes_with(marker) == []


@pytest.mark.asyncio
async def test_sandbox_unavailable_when_bwrap_is_missing(
    make_runtime: RuntimeFactory, workspace: Path, tmp_path: Path
) -> None:
    missing = str(tmp_path / "no-such-bwrap")
    for policy in ("workspace-write", "read-only"):
        outcome = await make_runtime(policy=policy, bwrap_path=missing).run("return 1", workspace=workspace)
        assert outcome.failure is not None and outcome.failure.kind is OutcomeKind.SANDBOX_UNAVAILABLE
    # The explicit opt-in needs no confinement and still runs.
    outcome = await make_runtime(policy="danger-full-access", bwrap_path=missing).run("return 1", workspace=workspace)
    assert outcome.ok and outcome.value == 1


@pytest.mark.asyncio
async def test_the_program_runs_in_the_configured_isolated_interpreter(
    make_runtime: RuntimeFactory, workspace: Path
) -> None:
    runtime = make_runtime()
    code = "import os, sys\nreturn [sys.executable, sys.flags.isolated, sys.flags.no_site, os.getcwd(), os.getppid()]"
    outcome = await runtime.run(code, workspace=workspace)
    assert outcome.ok, outcome.to_json()
    executable, isolated, no_site, cwd, parent = outcome.value
    assert os.path.realpath(executable) == runtime.limits.python == os.path.realpath(sys.executable)
    assert (isolated, no_site) == (1, 1)
    assert cwd == str(workspace) and parent == os.getpid()
