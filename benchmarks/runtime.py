"""The run_code runtime: start-up, nested-call round trip and parallel throughput (issue 3).

Run: /work/venv/bin/python benchmarks/runtime.py [--quick]
Writes benchmarks/results/runtime.json. Every figure is a ratio against a
baseline measured in the same run on the same machine:

(a) a trivial run (``return 1``) vs ``python -I -S -c pass`` and ``python -I -c pass``,
    cold (fresh spawn) and warm (the spare was ready before the call, the
    normal case between model turns), unconfined and under bubblewrap;
(b) 10,000 sequential nested calls of a no-op tool, per call, vs a raw pipe
    ping-pong of the same frames between two Python processes and vs an
    AF_UNIX socketpair ping-pong, measured both against the runtime's own
    lane (direct dispatch) and through the reference host's full pipeline;
(d) what the sandbox hardening of ADR 0049 (unprivileged uid, read-only kernel
    interfaces, seccomp) costs: warm and cold trivial runs under workspace-write
    with it vs without it, interleaved in three rounds;
(c) 1,000 calls of a ``parallel`` tool sleeping 10 ms with max_parallel=16,
    through the reference host and against the runtime alone (a 16-slot
    semaphore as the pool), vs the ideal 1000/16 x 10 ms, and the same sleeps
    in one process (what asyncio's millisecond-rounded timers allow);
(e) the nested no-op round trip (direct dispatch, workspace-write) with the control channel one TCP
    connection over a veth from the worker's own network namespace (ADR 0128) vs the normal pipe pair,
    interleaved in three rounds. Needs root and ``ip``; elsewhere the row says why it is missing.
    ``--far-channel-only`` runs just this row and writes benchmarks/results/runtime_far_channel.json.

``--executors`` measures only the executors (ADR 0127) and writes
benchmarks/results/runtime_executors.json: warm and cold trivial runs and the
nested-call round trip under workspace-write for bubblewrap and gVisor
(``runsc``, ptrace platform), each against ``python -I -S -c pass`` and
against each other, in one run; plus which gVisor platforms start here.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import attrs
import orjson

from hookspecs import ResultStatus, ToolCall, ToolContext, ToolDefinition, ToolResult, ToolSpec
from ptc_plus.config import WORKSPACE_DIR
from ptc_plus.runtime import sandbox
from ptc_plus.runtime.code_runtime import CodeRuntime
from ptc_plus.runtime.lane import NestedLane
from ptc_plus.runtime.launcher import Launcher
from ptc_plus.runtime.process import SpawnSpec
from ptc_plus.runtime.run_limits import RunLimits
from ptc_plus.runtime.tool import run_code_definition

RESULTS = Path(__file__).resolve().parent / "results" / "runtime.json"
FAR_RESULTS = RESULTS.with_name("runtime_far_channel.json")
EXECUTOR_RESULTS = RESULTS.with_name("runtime_executors.json")
ROOT = Path(__file__).resolve().parents[1]
PYTHON = os.path.realpath(sys.executable)
CALL = {"type": "call", "id": 1, "tool": "noop", "args": {}}
REPLY = {"type": "reply", "id": 1, "ok": True, "value": None}

ECHO_CHILD = """
import json, os, struct, sys
fd_in, fd_out = int(sys.argv[1]), int(sys.argv[2])
reply = sys.argv[3].encode()
frame = struct.pack('>I', len(reply)) + reply
def read(n):
    data = b''
    while len(data) < n:
        chunk = os.read(fd_in, n - len(data))
        if not chunk:
            sys.exit(0)
        data += chunk
    return data
while True:
    (n,) = struct.unpack('>I', read(4))
    json.loads(read(n))
    os.write(fd_out, frame)
"""


def _spawn_baseline(argv: list[str], runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, check=True)
        times.append(time.perf_counter() - start)
    return times


def _ping_pong(calls: int, use_socketpair: bool) -> float:
    """Seconds per round trip of CALL/REPLY frames with a child process (child decodes with json)."""
    if use_socketpair:
        parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        fds = (child.fileno(), child.fileno())
        read_fd, write_fd = parent.fileno(), parent.fileno()
    else:
        child_read, write_fd = os.pipe()
        read_fd, child_write = os.pipe()
        fds = (child_read, child_write)
    process = subprocess.Popen(
        [PYTHON, "-I", "-S", "-c", ECHO_CHILD, str(fds[0]), str(fds[1]), orjson.dumps(REPLY).decode()],
        pass_fds=sorted(set(fds)),
    )
    if use_socketpair:
        child.close()
    else:
        os.close(fds[0])
        os.close(fds[1])
    body = orjson.dumps(CALL)
    frame = struct.pack(">I", len(body)) + body

    def read(n: int) -> bytes:
        data = b""
        while len(data) < n:
            data += os.read(read_fd, n - len(data))
        return data

    start = time.perf_counter()
    for _ in range(calls):
        os.write(write_fd, frame)
        (n,) = struct.unpack(">I", read(4))
        orjson.loads(read(n))
    elapsed = time.perf_counter() - start
    if use_socketpair:
        parent.close()
    else:
        os.close(read_fd)
        os.close(write_fd)
    process.wait()
    return elapsed / calls


ASYNC_CHILD = """
import asyncio, json, os, struct, sys
fd_in, fd_out, calls, call = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4].encode()
frame = struct.pack('>I', len(call)) + call
async def main():
    loop = asyncio.get_running_loop()
    os.set_blocking(fd_in, False)
    buffer = bytearray()
    waiter = None
    def readable():
        nonlocal buffer
        buffer += os.read(fd_in, 65536)
        while len(buffer) >= 4:
            (n,) = struct.unpack_from('>I', buffer)
            if len(buffer) < 4 + n:
                break
            message = json.loads(buffer[4:4 + n])
            del buffer[:4 + n]
            waiter.set_result(message)
    loop.add_reader(fd_in, readable)
    for _ in range(calls):
        waiter = loop.create_future()
        os.write(fd_out, frame)
        await waiter
asyncio.run(main())
"""


async def _asyncio_ping_pong(calls: int) -> float:
    """The same frames with asyncio on both ends and no runtime logic: the floor of this design."""
    loop = asyncio.get_running_loop()
    child_read, host_write = os.pipe()
    host_read, child_write = os.pipe()
    reply = orjson.dumps(REPLY)
    reply_frame = struct.pack(">I", len(reply)) + reply
    argv = [
        PYTHON,
        "-I",
        "-S",
        "-c",
        ASYNC_CHILD,
        str(child_read),
        str(child_write),
        str(calls),
        orjson.dumps(CALL).decode(),
    ]
    process = subprocess.Popen(argv, pass_fds=(child_read, child_write))
    os.close(child_read)
    os.close(child_write)
    done: asyncio.Future[None] = loop.create_future()
    writer, _ = await loop.connect_write_pipe(asyncio.Protocol, os.fdopen(host_write, "wb", 0))
    seen = 0
    buffer = bytearray()
    tasks: set[asyncio.Task[None]] = set()

    async def answer() -> None:
        nonlocal seen
        writer.write(reply_frame)
        seen += 1
        if seen == calls:
            done.set_result(None)

    class Reader(asyncio.Protocol):
        def data_received(self, data: bytes) -> None:
            nonlocal buffer
            buffer += data
            while len(buffer) >= 4:
                (n,) = struct.unpack_from(">I", buffer)
                if len(buffer) < 4 + n:
                    break
                orjson.loads(bytes(buffer[4 : 4 + n]))
                del buffer[: 4 + n]
                tasks.add(loop.create_task(answer()))

    start = time.perf_counter()
    reader, _ = await loop.connect_read_pipe(Reader, os.fdopen(host_read, "rb", 0))
    await done
    elapsed = time.perf_counter() - start
    reader.close()
    writer.close()
    process.wait()
    return elapsed / calls


class DirectServices:
    """Dispatch straight to the tool body: the runtime's own cost, without a host's pipeline."""

    def __init__(self, workspace: Path, tools: list[ToolDefinition], max_parallel: int = 1) -> None:
        self._slots = asyncio.Semaphore(max_parallel)
        self.workspace = workspace
        self.user_id = ""
        self.token_counter = None
        self.spill_store = None
        self.protected_paths: tuple[Path, ...] = ()
        self._tools = {t.spec.name: t for t in tools}

    def tool_view(self, agent: Any) -> list[ToolSpec]:
        return [t.spec for t in self._tools.values()]

    async def dispatch(self, call: ToolCall) -> ToolResult:
        context = ToolContext(call=call, services=self, cancelled=asyncio.Event())  # type: ignore[arg-type]
        async with self._slots:
            value = await self._tools[call.tool].handler(call.arguments, context)
        return ToolResult(call_id=call.call_id, tool=call.tool, status=ResultStatus.OK, value=value)

    def append_record(self, agent: Any, record: Any) -> None:
        pass

    def read_records(self, agent: Any, kind: str | None = None) -> list[Any]:
        return []


async def _noop(arguments: Any, context: ToolContext) -> None:
    return None


async def _sleep10(arguments: Any, context: ToolContext) -> int:
    await asyncio.sleep(0.010)
    return 1


NOOP = ToolDefinition(spec=ToolSpec(name="noop", description="does nothing"), handler=_noop)
SLEEP = ToolDefinition(spec=ToolSpec(name="sleep10", description="sleeps 10 ms"), handler=_sleep10)


def _without_hardening(runtime: CodeRuntime) -> CodeRuntime:
    """``runtime`` with ADR 0013's sandbox as it was before ADR 0049: no capabilities lent, no self-confinement.

    The child then stays root with its capabilities dropped, as before issue 8;
    only the benchmark builds this, to measure what the hardening costs.
    """
    launcher = runtime._launcher
    original = launcher.spec_for

    def spec_for(workspace: Path, protected: Any = ()) -> SpawnSpec:
        spec = original(workspace, protected)
        argv = [arg for arg in spec.argv if not arg.startswith(sandbox.CONFINE_FLAG)]
        while "--cap-add" in argv:
            at = argv.index("--cap-add")
            del argv[at : at + 2]
        return attrs.evolve(spec, argv=tuple(argv))

    launcher.spec_for = spec_for  # type: ignore[method-assign]
    return runtime


async def _trivial_runs(
    workspace: Path, policy: str, runs: int, hardened: bool = True, executor: str = "bubblewrap"
) -> dict[str, float]:
    def runtime(warm_spare: bool) -> CodeRuntime:
        limits = RunLimits(policy=policy, warm_spare=warm_spare, executor=executor)
        made = CodeRuntime(limits, owner_paths=(WORKSPACE_DIR,))
        return made if hardened else _without_hardening(made)

    cold_runtime = runtime(warm_spare=False)
    cold = []
    for _ in range(runs):
        start = time.perf_counter()
        outcome = await cold_runtime.run("return 1", workspace=workspace)
        cold.append(time.perf_counter() - start)
        assert outcome.ok, outcome.to_json()
    await cold_runtime.aclose()
    warm_runtime = runtime(warm_spare=True)
    await warm_runtime.run("return 0", workspace=workspace)  # untimed: probes the sandbox, starts the spare
    warm = []
    for _ in range(runs):
        spare = warm_runtime._launcher.spare  # the benchmark waits (untimed) until the spare is ready
        if spare is not None:
            await asyncio.wait([spare])
        start = time.perf_counter()
        outcome = await warm_runtime.run("return 1", workspace=workspace)
        warm.append(time.perf_counter() - start)
        assert outcome.ok, outcome.to_json()
    back_to_back = []
    for _ in range(runs):
        start = time.perf_counter()
        await warm_runtime.run("return 1", workspace=workspace)
        back_to_back.append(time.perf_counter() - start)
    await warm_runtime.aclose()
    return {
        "cold_median_s": statistics.median(cold),
        "warm_median_s": statistics.median(warm),
        "warm_back_to_back_median_s": statistics.median(back_to_back),
    }


async def _hardening_cost(workspace: Path, runs: int) -> dict[str, Any]:
    """(d) workspace-write with ADR 0049's hardening vs the same sandbox without it, interleaved in rounds."""
    rounds: dict[str, list[dict[str, float]]] = {"hardened": [], "unhardened": []}
    for _ in range(3):
        for name, hardened in (("unhardened", False), ("hardened", True)):
            rounds[name].append(await _trivial_runs(workspace, "workspace-write", runs, hardened=hardened))
    result: dict[str, Any] = {}
    for key in ("cold_median_s", "warm_median_s"):
        hardened_s = statistics.median(r[key] for r in rounds["hardened"])
        unhardened_s = statistics.median(r[key] for r in rounds["unhardened"])
        result[key.replace("_median_s", "")] = {
            "hardened_median_s": hardened_s,
            "unhardened_median_s": unhardened_s,
            "ratio": hardened_s / unhardened_s,
        }
    return result


async def _in_process_parallel(calls: int, max_parallel: int) -> float:
    """The same sleeps under a semaphore in one process: what asyncio timers allow without any boundary."""
    slots = asyncio.Semaphore(max_parallel)

    async def one() -> None:
        async with slots:
            await asyncio.sleep(0.010)

    start = time.perf_counter()
    await asyncio.gather(*[one() for _ in range(calls)])
    return time.perf_counter() - start


NESTED_PROGRAM = "for _ in range({n}):\n    await tools.noop()\nreturn {n}\n"


async def _direct(workspace: Path, code: str, tool: ToolDefinition, max_parallel: int, **limits: Any) -> float:
    """Seconds for ``code`` minus a trivial run, dispatching straight to the tool (a semaphore as the pool)."""
    runtime = CodeRuntime(RunLimits(**{"policy": "danger-full-access", "warm_spare": False, **limits}))
    services = DirectServices(workspace, [tool], max_parallel)
    outer = ToolCall(call_id="bench", tool="run_code", arguments={}, caller=None)  # type: ignore[arg-type]
    base = await _timed(runtime, workspace, "return 0", services, outer, ())
    total = await _timed(runtime, workspace, code, services, outer, (tool.spec.name,))
    await runtime.aclose()
    return total - base


async def _timed(
    runtime: CodeRuntime, workspace: Path, code: str, services: Any, outer: ToolCall, names: tuple[str, ...]
) -> float:
    lane = NestedLane(services, outer)
    start = time.perf_counter()
    outcome = await runtime.run(code, workspace=workspace, tool_names=names, lane=lane)
    elapsed = time.perf_counter() - start
    assert outcome.ok, outcome.to_json()
    return elapsed


async def _far_channel(workspace: Path, calls: int, rounds: int = 3) -> dict[str, Any]:
    """(e) per nested call over one TCP socket from another network namespace vs over the pipe pair."""
    sys.path.insert(0, str(ROOT))  # the far side is the test suite's (tests/ptc_plus/runtime/far_side.py)
    from tests.ptc_plus.runtime import far_side

    if not far_side.usable():
        return {"skipped": "needs root and iproute2's `ip` for a network namespace with a veth pair"}
    code = NESTED_PROGRAM.format(n=calls)
    outer = ToolCall(call_id="bench", tool="run_code", arguments={}, caller=None)  # type: ignore[arg-type]
    services = DirectServices(workspace, [NOOP], 1)
    per_call: dict[str, list[float]] = {"pipe": [], "tcp": []}
    with far_side.far_side() as side:
        launchers: dict[str, type[Launcher]] = {"pipe": Launcher, "tcp": far_side.launcher_for(side)}
        for _ in range(rounds):
            for name, launcher in launchers.items():
                limits = RunLimits(policy="workspace-write", warm_spare=False)
                runtime = far_side.runtime_with(launcher, limits)
                base = await _timed(runtime, workspace, "return 0", services, outer, ())
                total = await _timed(runtime, workspace, code, services, outer, ("noop",))
                await runtime.aclose()
                per_call[name].append((total - base) / calls)
    pipe, tcp = statistics.median(per_call["pipe"]), statistics.median(per_call["tcp"])
    return {
        "calls": calls,
        "rounds": rounds,
        "policy": "workspace-write",
        "pipe_pair_per_call_s": pipe,
        "tcp_over_veth_per_call_s": tcp,
        "tcp_ratio_to_pipe": tcp / pipe,
        "per_round_s": per_call,
    }


async def _through_host(workspace: Path, code: str, tools: list[ToolDefinition], max_parallel: int) -> float:
    from hookspecs.reference import ReferenceHost

    runtime = CodeRuntime(RunLimits(policy="danger-full-access", warm_spare=False))
    with tempfile.TemporaryDirectory() as state:
        host = ReferenceHost(
            workspace=workspace,
            state_dir=Path(state),
            tools=[*tools, run_code_definition(runtime=runtime)],
            load_entry_points=False,
            max_parallel=max_parallel,
        )
        async with host:
            session = await host.start_session(user_id="bench", title="bench")
            start = time.perf_counter()
            result = await session.call_tool("run_code", {"description": "bench", "code": code})
            elapsed = time.perf_counter() - start
            assert result.ok, result
    await runtime.aclose()
    return elapsed


async def main(quick: bool) -> dict[str, Any]:
    runs = 10 if quick else 30
    calls = 2_000 if quick else 10_000
    workspace = Path(tempfile.mkdtemp(prefix="ptc-bench-")).resolve()
    python_s = statistics.median(_spawn_baseline([PYTHON, "-I", "-S", "-c", "pass"], runs))
    python_site = statistics.median(_spawn_baseline([PYTHON, "-I", "-c", "pass"], runs))
    startup: dict[str, Any] = {"python_I_S_pass_median_s": python_s, "python_I_pass_median_s": python_site}
    for policy in ("danger-full-access", "workspace-write"):
        measured = await _trivial_runs(workspace, policy, runs)
        measured["warm_ratio_to_python_I_S"] = measured["warm_median_s"] / python_s
        measured["cold_ratio_to_python_I_S"] = measured["cold_median_s"] / python_s
        measured["warm_ratio_to_python_I"] = measured["warm_median_s"] / python_site
        startup[policy] = measured
    startup["hardening"] = await _hardening_cost(workspace, runs)

    pipe = _ping_pong(calls, use_socketpair=False)
    pair = _ping_pong(calls, use_socketpair=True)
    floor = await _asyncio_ping_pong(calls)
    direct = await _direct(workspace, NESTED_PROGRAM.format(n=calls), NOOP, 1) / calls
    base = await _through_host(workspace, "return 0", [NOOP], 8)
    hosted = (await _through_host(workspace, NESTED_PROGRAM.format(n=calls), [NOOP], 8) - base) / calls
    nested = {
        "calls": calls,
        "pipe_ping_pong_s": pipe,
        "socketpair_ping_pong_s": pair,
        "asyncio_ping_pong_s": floor,
        "runtime_direct_dispatch_per_call_s": direct,
        "reference_host_per_call_s": hosted,
        "direct_ratio_to_socketpair": direct / pair,
        "direct_ratio_to_pipe": direct / pipe,
        "host_ratio_to_socketpair": hosted / pair,
        "direct_ratio_to_asyncio_ping_pong": direct / floor,
    }

    parallel_calls = 1_000
    code = (
        "import asyncio\n"
        f"values = await asyncio.gather(*[tools.sleep10() for _ in range({parallel_calls})])\n"
        "return sum(values)\n"
    )
    elapsed = await _through_host(workspace, code, [SLEEP], 16) - base
    direct_parallel = await _direct(workspace, code, SLEEP, 16)
    in_process = await _in_process_parallel(parallel_calls, 16)
    ideal = parallel_calls / 16 * 0.010
    parallel = {
        "calls": parallel_calls,
        "max_parallel": 16,
        "ideal_seconds": ideal,
        "reference_host_seconds": elapsed,
        "reference_host_efficiency": ideal / elapsed,
        "runtime_direct_seconds": direct_parallel,
        "runtime_direct_efficiency": ideal / direct_parallel,
        "in_process_asyncio_seconds": in_process,
        "in_process_asyncio_efficiency": ideal / in_process,
    }
    return {
        "version": 2,
        "benchmark": "runtime",
        "quick": quick,
        "targets": targets(startup, nested, parallel),
        "startup": startup,
        "nested": nested,
        "parallel": parallel,
        "far_channel": await _far_channel(workspace, calls),
    }


def _platform_starts(platform: str) -> dict[str, Any]:
    """Whether ``runsc --platform=PLATFORM do python -I -S -c pass`` works here (60 s at most), and what it said."""
    argv = ["runsc", f"--platform={platform}", "--network=none", "do", PYTHON, "-I", "-S", "-c", "pass"]
    start = time.perf_counter()
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60, cwd="/")
    except subprocess.TimeoutExpired:
        return {"works": False, "detail": "no answer within 60 s (killed)"}
    except OSError as error:
        return {"works": False, "detail": str(error)}
    elapsed = time.perf_counter() - start
    detail = (done.stderr.strip().splitlines() or [""])[-1][:300]
    return {"works": done.returncode == 0, "seconds": elapsed, "detail": detail}


async def executors(quick: bool) -> dict[str, Any]:
    """Bubblewrap vs gVisor vs ``python -I -S -c pass``: trivial runs (cold, warm) and the nested call, one run."""
    runs = 5 if quick else 15
    calls = 500 if quick else 2_000
    workspace = Path(tempfile.mkdtemp(prefix="ptc-bench-")).resolve()
    python_s = statistics.median(_spawn_baseline([PYTHON, "-I", "-S", "-c", "pass"], runs))
    rows: dict[str, Any] = {}
    for executor in ("bubblewrap", "gvisor"):
        row: dict[str, Any] = dict(await _trivial_runs(workspace, "workspace-write", runs, executor=executor))
        program = NESTED_PROGRAM.format(n=calls)
        row["nested_per_call_s"] = (
            await _direct(workspace, program, NOOP, 1, policy="workspace-write", executor=executor) / calls
        )
        row["cold_ratio_to_python_I_S"] = row["cold_median_s"] / python_s
        row["warm_ratio_to_python_I_S"] = row["warm_median_s"] / python_s
        rows[executor] = row
    gvisor, bubblewrap = rows["gvisor"], rows["bubblewrap"]
    return {
        "version": 1,
        "benchmark": "runtime-executors",
        "quick": quick,
        "runs": runs,
        "nested_calls": calls,
        "python_I_S_pass_median_s": python_s,
        "executors": rows,
        "gvisor_vs_bubblewrap": {
            key: gvisor[key] / bubblewrap[key]
            for key in ("cold_median_s", "warm_median_s", "warm_back_to_back_median_s", "nested_per_call_s")
        },
        "gvisor_platforms": {name: _platform_starts(name) for name in ("ptrace", "systrap", "kvm")},
    }


def _target(name: str, measured: float, bound: float, at_most: bool) -> dict[str, Any]:
    met = measured <= bound if at_most else measured >= bound
    return {"name": name, "target": f"{'<=' if at_most else '>='} {bound:g}", "measured": measured, "met": met}


def targets(startup: dict[str, Any], nested: dict[str, Any], parallel: dict[str, Any]) -> list[dict[str, Any]]:
    """Issue 3's targets, each with the measured ratio and whether it was met in this run."""
    return [
        _target(
            "(a) warm trivial run_code, workspace-write / python -I -S -c pass",
            startup["workspace-write"]["warm_ratio_to_python_I_S"],
            1.5,
            at_most=True,
        ),
        _target(
            "(a) warm trivial run_code, danger-full-access / python -I -S -c pass",
            startup["danger-full-access"]["warm_ratio_to_python_I_S"],
            1.5,
            at_most=True,
        ),
        _target(
            "(d) warm trivial run_code, workspace-write, ADR 0049 hardening / the same sandbox without it",
            startup["hardening"]["warm"]["ratio"],
            1.1,
            at_most=True,
        ),
        _target(
            "(b) nested no-op round trip through the reference host / socketpair ping-pong",
            nested["host_ratio_to_socketpair"],
            1.5,
            at_most=True,
        ),
        _target(
            "(b) nested no-op round trip, runtime direct dispatch / socketpair ping-pong",
            nested["direct_ratio_to_socketpair"],
            1.5,
            at_most=True,
        ),
        _target(
            "(c) 1000 parallel 10 ms calls, max_parallel 16, through the reference host / ideal",
            parallel["reference_host_efficiency"],
            0.9,
            at_most=False,
        ),
    ]


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer repetitions (a smoke run)")
    parser.add_argument("--far-channel-only", action="store_true", help="only (e), into runtime_far_channel.json")
    parser.add_argument("--executors", action="store_true", help="only bubblewrap vs gVisor (ADR 0127)")
    arguments = parser.parse_args()
    if arguments.far_channel_only:
        workspace = Path(tempfile.mkdtemp(prefix="ptc-bench-")).resolve()
        far = asyncio.run(_far_channel(workspace, 2_000 if arguments.quick else 10_000))
        results = {"version": 1, "benchmark": "runtime-far-channel", "quick": arguments.quick, "far_channel": far}
        target = FAR_RESULTS
    elif arguments.executors:
        results = asyncio.run(executors(arguments.quick))
        target = EXECUTOR_RESULTS
    else:
        results = asyncio.run(main(arguments.quick))
        target = RESULTS
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(orjson.dumps(results, option=orjson.OPT_INDENT_2) + b"\n")
    print(orjson.dumps(results, option=orjson.OPT_INDENT_2).decode())
