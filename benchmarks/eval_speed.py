"""Where one evaluation run's time goes, before and after ADR 0119 (issue 27: all of BFCL in ``ptc-plus eval``).

Each variant runs in a fresh process (``--child``): the BFCL suite is loaded, then ``--runs`` runs of one task
(default ``multi-turn-base-0``) in one style (default ``ptc-plus-cold``) at one catalog size (default 2,000
tools), each through :func:`~ptc_plus.evaluation.runner.run_task` as ``ptc-plus eval`` runs it. The first run
pays the process's one-time costs (imports, the tokenizer, the catalog cache) and is reported apart; the
medians are over the others. Variants:

- ``before``: the token counter remembers nothing (``COUNT_MEMO_CHARS = 0``: every count encodes again, as
  before ADR 0119) and the collector scans every object the process holds;
- ``after``: as shipped: counts remembered by text, and the worker's long-lived objects (the suite, the
  tokenizer, the imports) frozen out of the collector's scans after loading and after each run
  (:func:`~ptc_plus.evaluation.jobs.settle_heap`, counted in the run's time), as ``ptc-plus eval`` does.

Measured per run: wall seconds; CPU seconds of the process (``process_time``: its threads) and of the
children it reaped (the sandboxed programs); CPU seconds in the garbage collector (``gc.callbacks``, thread
time). A loaded machine inflates wall time, not CPU time: the ratios are of CPU. Every run must pass its
oracle, and both variants must meter the same requests (checked: the exchanges are compared).

Run: ``.venv/bin/python benchmarks/eval_speed.py [--runs 4] [--task ID] [--style S] [--catalog N]``
→ benchmarks/results/eval_speed.json
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import hashlib
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).resolve().parent / "results" / "eval_speed.json"


def child(variant: str, task_id: str, style_name: str, catalog: int, runs: int) -> dict[str, Any]:
    # Run as a script, this directory comes first on sys.path, where benchmarks/mcp.py would shadow the MCP SDK.
    sys.path[:] = [str(ROOT)] + [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
    from ptc_plus.capabilities import cost
    from ptc_plus.evaluation import runner
    from ptc_plus.evaluation.jobs import settle_heap
    from ptc_plus.evaluation.loading import load_suite
    from ptc_plus.evaluation.task import Style

    if variant == "before":
        cost.COUNT_MEMO_CHARS = 0
    suite = load_suite(ROOT / "benchmarks" / "bfcl")
    task = next(t for t in suite.tasks if t.id == task_id)
    if variant == "after":
        settle_heap()
    collecting = [0.0, 0.0]

    def watch(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            collecting[1] = time.thread_time()
        else:
            collecting[0] += time.thread_time() - collecting[1]

    gc.callbacks.append(watch)
    workdir = Path(tempfile.mkdtemp(prefix="eval-speed-"))
    measured: list[dict[str, Any]] = []
    for _ in range(runs):
        collecting[0] = 0.0
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        wall, cpu = time.perf_counter(), time.process_time()
        result = asyncio.run(runner.run_task(suite, task, Style(style_name), catalog, workdir=workdir))
        if variant == "after":
            settle_heap()  # as a ptc-plus eval worker does between runs (counted in the run's time)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        reaped = after.ru_utime + after.ru_stime - children.ru_utime - children.ru_stime
        assert result.verdict.passed, result.verdict.reason
        digest = hashlib.sha256(orjson.dumps([repr(e.request) + repr(e.answer) for e in result.exchanges])).hexdigest()
        measured.append(
            {
                "wall_s": round(wall, 3),
                "cpu_s": round(cpu, 3),
                "children_cpu_s": round(reaped, 3),
                "gc_cpu_s": round(collecting[0], 3),
                "exchanges": len(result.exchanges),
                "exchanges_sha256": digest,
            }
        )
    return {"variant": variant, "runs": measured}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=4)
    parser.add_argument("--task", default="multi-turn-base-0")
    parser.add_argument("--style", default="ptc-plus-cold")
    parser.add_argument("--catalog", type=int, default=2000)
    parser.add_argument("--child", default=None)
    options = parser.parse_args()
    if options.child:
        found = child(options.child, options.task, options.style, options.catalog, options.runs)
        sys.stdout.buffer.write(orjson.dumps(found))
        return
    load = os.getloadavg()
    variants: dict[str, Any] = {}
    for variant in ("before", "after"):
        command = [sys.executable, __file__, "--child", variant, "--runs", str(options.runs)]
        command += ["--task", options.task, "--style", options.style, "--catalog", str(options.catalog)]
        found = orjson.loads(subprocess.run(command, check=True, capture_output=True, cwd=ROOT).stdout)
        first, *rest = found["runs"]
        variants[variant] = {
            "first_run": first,
            "median": {
                key: round(statistics.median(r[key] for r in rest), 3)
                for key in ("wall_s", "cpu_s", "children_cpu_s", "gc_cpu_s")
            },
            "runs": rest,
        }
    digests = {r["exchanges_sha256"] for v in variants.values() for r in [v["first_run"], *v["runs"]]}
    before, after = variants["before"]["median"], variants["after"]["median"]
    total_before = before["cpu_s"] + before["children_cpu_s"]
    total_after = after["cpu_s"] + after["children_cpu_s"]
    report = {
        "version": 1,
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cores": len(os.sched_getaffinity(0)),
        "load_average": [round(x, 2) for x in (*load, *os.getloadavg())],
        "task": options.task,
        "style": options.style,
        "catalog": options.catalog,
        "runs_per_variant": options.runs,
        "same_exchanges_in_every_run": len(digests) == 1,
        "variants": variants,
        "cpu_ratio_after_over_before": round(after["cpu_s"] / before["cpu_s"], 3),
        "total_cpu_ratio_after_over_before": round(total_after / total_before, 3),
        "gc_cpu_saved_s": round(before["gc_cpu_s"] - after["gc_cpu_s"], 3),
    }
    RESULTS.write_bytes(orjson.dumps(report, option=orjson.OPT_INDENT_2) + b"\n")
    print(orjson.dumps(report, option=orjson.OPT_INDENT_2).decode())


if __name__ == "__main__":
    main()
