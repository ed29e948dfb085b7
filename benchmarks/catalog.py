"""Catalog latency: SDK render and search for 100, 1,000 and 10,000 capabilities.

For each size: render the whole SDK once (``render_sdk``), build the catalog
snapshot once (render every contract, meter it, index it), build the search
index alone once more (``build_index`` over the managed capabilities with the
keywords already compiled: the "discovery index" of issue 17), then time
``discovery.search`` (default budget) and ``rank`` over the labelled queries,
repeated, reporting p50 and p99. Baseline in the same run: a naive linear
scan counting query words in name + description (no index).

Run: ``.venv/bin/python benchmarks/catalog.py [--sizes 100,1000,10000]`` → benchmarks/results/catalog.json
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))

from catalog_data import DATA, scaled_tools
from search_quality import naive_rank

from ptc_plus.capabilities.catalog import build_catalog
from ptc_plus.capabilities.discovery import search
from ptc_plus.capabilities.index import build_index
from ptc_plus.capabilities.search import rank
from ptc_plus.capabilities.snapshot import build_snapshot
from ptc_plus.sdk import render_sdk

RESULTS = Path(__file__).resolve().parent / "results" / "catalog.json"


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def timed(fn: Any, *args: Any, **kwargs: Any) -> tuple[Any, float]:
    start = time.perf_counter()
    value = fn(*args, **kwargs)
    return value, time.perf_counter() - start


def measure(size: int, queries: list[str], rounds: int) -> dict[str, Any]:
    specs = scaled_tools(size)
    sdk, render_s = timed(render_sdk, specs)
    snapshot, snapshot_s = timed(lambda: build_snapshot(build_catalog(tools=specs)))
    _, index_s = timed(build_index, snapshot.catalog.capabilities, snapshot.index.keywords)
    search_ms: list[float] = []
    rank_ms: list[float] = []
    naive_ms: list[float] = []
    for _ in range(rounds):
        for query in queries:
            search_ms.append(timed(search, snapshot, query)[1] * 1000)
            rank_ms.append(timed(rank, snapshot.index, query, limit=10)[1] * 1000)
            naive_ms.append(timed(naive_rank, snapshot, query)[1] * 1000)
    result = {
        "capabilities": len(snapshot.catalog.capabilities),
        "render_sdk_s": round(render_s, 4),
        "sdk_chars": len(sdk.text),
        "build_snapshot_s": round(snapshot_s, 4),
        "build_index_s": round(index_s, 4),
        "search_samples": len(search_ms),
        "search_p50_ms": round(percentile(search_ms, 0.5), 3),
        "search_p99_ms": round(percentile(search_ms, 0.99), 3),
        "rank_p50_ms": round(percentile(rank_ms, 0.5), 3),
        "rank_p99_ms": round(percentile(rank_ms, 0.99), 3),
        "baseline_naive_scan_p50_ms": round(percentile(naive_ms, 0.5), 3),
        "rank_p50_over_baseline": round(percentile(rank_ms, 0.5) / max(1e-9, percentile(naive_ms, 0.5)), 3),
        "search_mean_ms": round(statistics.fmean(search_ms), 3),
    }
    print(size, result)
    return result


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100,1000,10000")
    parser.add_argument("--rounds", type=int, default=4)
    args = parser.parse_args(argv)
    queries = [q["query"] for q in orjson.loads((DATA / "search_queries.json").read_bytes())["queries"]]
    report = {
        "version": 1,
        "python": platform.python_version(),
        "machine": platform.machine(),
        "queries": len(queries),
        "rounds": args.rounds,
        "sizes": {size: measure(int(size), queries, args.rounds) for size in args.sizes.split(",")},
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_bytes(orjson.dumps(report, option=orjson.OPT_INDENT_2) + b"\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
