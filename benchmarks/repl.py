"""The REPL kernel (issue 16): a cell in a live kernel vs a run in a fresh process, and replay.

Run: ``.venv/bin/python benchmarks/repl.py [--runs N] [--cells N] [--output FILE]``
→ benchmarks/results/repl.json. Everything goes through the reference host's full
``run_code`` pipeline under the default policy (workspace-write, bubblewrap), with the warm
spare on as in a session. Figures are ratios against a baseline measured in the same run:

(a) a trivial cell (``return 1``) in kernel mode vs the same program in fresh-process mode
    (target ≤ 0.2×), medians over ``--runs`` calls after one warm-up call each;
(b) a cell making one nested call of a no-op host tool, kernel vs fresh;
(c) replay: ``--cells`` cells (each binding a name from a nested call) are journalled in a
    directory, then a new runtime runs one more cell, which must first rebuild the kernel by
    replaying them all; reported per replayed cell and against (a)'s fresh run, with the
    host's dispatch count during the replay (must be 0: nothing is dispatched again).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import attrs
import orjson

from hookspecs import JSONObject, JSONValue, ToolContext, ToolDefinition, tool
from hookspecs.reference import ReferenceHost
from ptc_plus.config import WORKSPACE_DIR
from ptc_plus.runtime import CodeRuntime, KernelCell, KernelMode, RunLimits, run_code_definition
from ptc_plus.runtime.kernel import DirectoryStore

RESULTS = Path(__file__).resolve().parent / "results" / "repl.json"


class Counter:
    def __init__(self) -> None:
        self.calls = 0

    def definition(self) -> ToolDefinition:
        @tool(name="noop", description="Return the argument.")
        async def noop(arguments: JSONObject, context: ToolContext) -> JSONValue:
            self.calls += 1
            return arguments.get("i")

        return noop


async def _calls(
    workspace: Path, limits: RunLimits, programs: list[str], journal: Path | None, counter: Counter
) -> tuple[list[float], Any]:
    """Seconds of each ``run_code`` call of ``programs`` in one session, and the runtime's recovery."""
    runtime = CodeRuntime(limits, owner_paths=(WORKSPACE_DIR,))
    store = DirectoryStore(journal) if journal is not None else None

    def kernel_for(context: ToolContext) -> KernelCell | None:
        if store is None:
            return None
        return KernelCell(session=str(journal), store=store, call_id=context.call.call_id)

    definition = run_code_definition(runtime=runtime, kernel_for=kernel_for)
    times: list[float] = []
    with tempfile.TemporaryDirectory(prefix="ptc-repl-bench-") as state:
        host = ReferenceHost(
            workspace=workspace,
            state_dir=Path(state),
            tools=[counter.definition(), definition],
            load_entry_points=False,
        )
        try:
            async with host:
                session = await host.start_session(user_id="bench", title="repl benchmark")
                for code in programs:
                    await asyncio.sleep(0.05)  # the spare is ready between model turns
                    start = time.perf_counter()
                    result = await session.call_tool("run_code", {"description": "bench", "code": code})
                    times.append(time.perf_counter() - start)
                    if not result.ok:
                        raise SystemExit(f"benchmark cell failed: {result.error}")
        finally:
            await runtime.aclose()
    return times, runtime.recovery(str(journal)) if journal is not None else None


def _median_ms(samples: list[float]) -> float:
    return round(statistics.median(samples) * 1000, 3)


def measure(runs: int, cells: int) -> dict[str, Any]:
    fresh = RunLimits()
    kernel = attrs.evolve(fresh, kernel=KernelMode.SESSION)
    counter = Counter()
    out: dict[str, Any] = {"runs": runs, "cells": cells, "python": sys.version.split()[0]}
    with tempfile.TemporaryDirectory(prefix="ptc-repl-ws-") as ws:
        workspace = Path(ws)
        for label, code in (("trivial", "return 1"), ("nested_call", "return await tools.noop(i=1)")):
            programs = [code] * (runs + 1)
            fresh_times, _ = asyncio.run(_calls(workspace, fresh, programs, None, counter))
            with tempfile.TemporaryDirectory(prefix="ptc-repl-journal-") as journal:
                kernel_times, _ = asyncio.run(_calls(workspace, kernel, programs, Path(journal), counter))
            fresh_ms, kernel_ms = _median_ms(fresh_times[1:]), _median_ms(kernel_times[1:])
            out[label] = {
                "fresh_ms": fresh_ms,
                "kernel_ms": kernel_ms,
                "kernel_over_fresh": round(kernel_ms / fresh_ms, 4),
            }
        with tempfile.TemporaryDirectory(prefix="ptc-repl-journal-") as journal:
            programs = [f"x{i} = await tools.noop(i={i})" for i in range(cells)]
            asyncio.run(_calls(workspace, kernel, programs, Path(journal), counter))
            before = counter.calls
            # A new runtime: no live kernel, so the next cell rebuilds the state of all journalled cells.
            check = "return " + " + ".join(f"x{i}" for i in range(cells))
            times, recovery = asyncio.run(_calls(workspace, kernel, [check], Path(journal), counter))
            replay_s = times[0]
            out["replay"] = {
                "journalled_cells": cells,
                "replayed": recovery.replayed if recovery is not None else None,
                "skipped": recovery.skipped if recovery is not None else None,
                "dispatches_during_replay": counter.calls - before,
                "cold_cell_ms": round(replay_s * 1000, 1),
                "per_replayed_cell_ms": round(replay_s * 1000 / max(cells, 1), 3),
                "per_replayed_cell_over_fresh_run": round(
                    replay_s / max(cells, 1) / (out["trivial"]["fresh_ms"] / 1000), 4
                ),
            }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--cells", type=int, default=100)
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args()
    results = measure(args.runs, args.cells)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_bytes(orjson.dumps(results, option=orjson.OPT_INDENT_2) + b"\n")
    print(orjson.dumps(results, option=orjson.OPT_INDENT_2).decode())


if __name__ == "__main__":
    main()
