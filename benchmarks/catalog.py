"""Catalog latency: SDK render, catalog, index and search for 100, 1,000 and 10,000 capabilities.

For each size, **cold** (no disk cache, as before ADR 0078): render the whole SDK once
(``render_sdk``), build the catalog (every tool rendered) and its snapshot once (contracts metered,
index built), and build the search index alone once more (``build_index``: the "discovery index" of
issue 17). Then **first session**: the same through an empty scratch disk cache (build and store), and
**warm**: a *new process* over the same catalog and cache, as a new session would be, timing
``render_sdk``, ``build_catalog``, ``cached_index`` and ``build_snapshot`` (median of ``--warm-runs``
processes). Then ``discovery.search`` (default budget) and ``ranking`` (limit 10) over the labelled
queries, repeated, reporting p50 and p99 — lexical only (``PTC_PLUS_SEMANTIC=off``), and with the
semantic layer too when ``--semantic`` is given and it is installed (ADR 0077); ``search_cpu_*`` is the
same search in this thread's CPU time, which a busy shared machine's preemptions do not inflate (the
target is on wall time, ``search_p99_ms``). Nothing caches a query, and the semantic layer's kept query
vectors (ADR 0132) are dropped before each timed call, so a repeated query costs what a new one does
(``benchmarks/search_speed.py`` times the repeated case apart). ``ranking`` runs over numpy arrays above
``search.ARRAYS_ABOVE`` capabilities where numpy is installed (``ranker``); ``reference_rank_*`` times the
plain-Python loops an install without numpy runs (one round), and ``rankings_differing_from_reference``
counts the queries whose ranking (limits 3 and 10) is not byte-identical to theirs (must be 0). Baseline
in the same run: a naive linear scan counting query words in name + description (no index); ``search_p50_over_baseline``
and ``search_p99_over_baseline`` divide the search's p50 and p99 by the scan's, a ratio a busy shared
machine distorts less than the milliseconds.

``search_lexical_without_numpy`` is the whole lexical search (ranking and delivery) as an install without
numpy runs it (numpy comes with the ``semantic`` extra only): the same measurement in a child process
where numpy cannot be imported, over a catalog built there (``ranker`` says "python loops"). Issue 17's
target at 10,000 capabilities is its ``search_p99_ms`` <= 5 ms. ``--search-only`` skips the build timings
(a quicker run of the search sections alone; give it its own ``--output``).

The scratch cache lives in a temporary directory; the user's own cache is never touched, except by the
semantic layer's catalog embeddings with ``--semantic`` (stored there as in any session, ADR 0077).

Run: ``.venv/bin/python benchmarks/catalog.py [--sizes 100,1000,10000] [--semantic] [--search-only] [--output FILE]``
→ benchmarks/results/catalog.json
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))

from catalog_data import DATA, scaled_tools
from search_quality import naive_rank

from ptc_plus.capabilities.catalog import build_catalog
from ptc_plus.capabilities.cost import offline_counter
from ptc_plus.capabilities.disk_cache import DiskCache
from ptc_plus.discovery.api import search, semantic_layer
from ptc_plus.discovery.index import build_index, cached_index
from ptc_plus.discovery.keywords import compile_keywords, default_keyword_index
from ptc_plus.discovery.ranker import ranking, reference_ranking, uses_arrays
from ptc_plus.discovery.semantic import enabled as semantic_enabled
from ptc_plus.discovery.snapshot import CatalogSnapshot, build_snapshot
from ptc_plus.sdk import render_sdk

RESULTS = Path(__file__).resolve().parent / "results" / "catalog.json"


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def timed(fn: Any, *args: Any, **kwargs: Any) -> tuple[Any, float]:
    start = time.perf_counter()
    value = fn(*args, **kwargs)
    return value, time.perf_counter() - start


def through_cache(size: int, cache: DiskCache) -> dict[str, float]:
    """One session's builds through ``cache``: SDK, catalog, index alone, snapshot (seconds).

    The offline tokenizer is loaded first and timed apart (``tokenizer_load_s``): a session loads it
    once anyway, for its plan. ``build_snapshot_s`` meters every contract and loads (or builds) the index.
    """
    specs = scaled_tools(size)
    _, tokenizer_s = timed(lambda: offline_counter().count("warm"))
    _, sdk_s = timed(render_sdk, specs, cache=cache)
    catalog, catalog_s = timed(build_catalog, tools=specs, cache=cache)
    keywords = compile_keywords(default_keyword_index())
    _, index_s = timed(cached_index, catalog.managed(), keywords, cache)
    _, snapshot_s = timed(build_snapshot, catalog, cache=cache)
    return {
        "render_sdk_s": sdk_s,
        "build_catalog_s": catalog_s,
        "build_index_s": index_s,
        "build_snapshot_s": snapshot_s,
        "tokenizer_load_s": tokenizer_s,
    }


def warm_in_new_processes(size: int, directory: Path, runs: int) -> dict[str, float]:
    """Median over ``runs`` fresh processes of :func:`through_cache` over an already filled cache."""
    samples: list[dict[str, float]] = []
    for _ in range(runs):
        child = [sys.executable, __file__, "--warm-child", str(size), str(directory)]
        done = subprocess.run(child, check=True, capture_output=True, env={**os.environ, "PTC_PLUS_SEMANTIC": "off"})
        samples.append(orjson.loads(done.stdout))
    return {name: round(statistics.median(s[name] for s in samples), 4) for name in samples[0]}


def search_latency(snapshot: CatalogSnapshot, queries: list[str], rounds: int, semantic: bool) -> dict[str, Any]:
    os.environ["PTC_PLUS_SEMANTIC"] = "on" if semantic else "off"
    layer = semantic_layer(snapshot)
    search(snapshot, queries[0])  # the tokenizer's one-off load is not a search
    search_ms: list[float] = []
    search_cpu_ms: list[float] = []
    rank_ms: list[float] = []
    naive_ms: list[float] = []
    reference_ms: list[float] = []
    for round_number in range(rounds):
        for query in queries:
            forget = layer.forget_queries if layer is not None else lambda: None
            forget()
            cpu = time.thread_time()
            search_ms.append(timed(search, snapshot, query)[1] * 1000)
            search_cpu_ms.append((time.thread_time() - cpu) * 1000)
            forget()
            rank_ms.append(timed(ranking, snapshot.index, query, limit=10, semantic=layer)[1] * 1000)
            if not semantic:
                naive_ms.append(timed(naive_rank, snapshot, query)[1] * 1000)
            if round_number == 0:
                reference_ms.append(timed(reference_ranking, snapshot.index, query, limit=10, semantic=layer)[1] * 1000)
    # The ranker the timings measured against the plain-Python definition it must equal, bit for bit.
    differing = [
        query
        for query in queries
        for limit in (3, 10)
        if repr(ranking(snapshot.index, query, limit=limit, semantic=layer))
        != repr(reference_ranking(snapshot.index, query, limit=limit, semantic=layer))
    ]
    found = {
        "semantic_layer": layer is not None,
        "ranker": "numpy arrays" if uses_arrays(len(snapshot.index.identities)) else "python loops",
        "rankings_differing_from_reference": len(differing),
        "search_samples": len(search_ms),
        "search_p50_ms": round(percentile(search_ms, 0.5), 3),
        "search_p99_ms": round(percentile(search_ms, 0.99), 3),
        "search_mean_ms": round(statistics.fmean(search_ms), 3),
        "search_cpu_p50_ms": round(percentile(search_cpu_ms, 0.5), 3),
        "search_cpu_p99_ms": round(percentile(search_cpu_ms, 0.99), 3),
        "rank_p50_ms": round(percentile(rank_ms, 0.5), 3),
        "rank_p99_ms": round(percentile(rank_ms, 0.99), 3),
        "reference_rank_p50_ms": round(percentile(reference_ms, 0.5), 3),
        "reference_rank_p99_ms": round(percentile(reference_ms, 0.99), 3),
    }
    if naive_ms:
        naive_p50, naive_p99 = max(1e-9, percentile(naive_ms, 0.5)), max(1e-9, percentile(naive_ms, 0.99))
        found["baseline_naive_scan_p50_ms"] = round(naive_p50, 3)
        found["baseline_naive_scan_p99_ms"] = round(naive_p99, 3)
        found["rank_p50_over_baseline"] = round(percentile(rank_ms, 0.5) / naive_p50, 3)
        found["search_p50_over_baseline"] = round(percentile(search_ms, 0.5) / naive_p50, 3)
        found["search_p99_over_baseline"] = round(percentile(search_ms, 0.99) / naive_p99, 3)
    return found


_WITHOUT_NUMPY = """
import runpy, sys
sys.modules["numpy"] = None  # before anything imports it: an install without the semantic extra
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def without_numpy(size: int, rounds: int) -> dict[str, Any]:
    """:func:`search_latency` (lexical) in a child process where numpy cannot be imported."""
    child = [sys.executable, "-c", _WITHOUT_NUMPY, __file__, "--without-numpy-child", str(size), str(rounds)]
    done = subprocess.run(child, check=True, capture_output=True, env={**os.environ, "PTC_PLUS_SEMANTIC": "off"})
    found: dict[str, Any] = orjson.loads(done.stdout)
    return found


def without_numpy_child(size: int, rounds: int) -> int:
    if sys.modules.get("numpy", False) is not None or uses_arrays(size):
        raise SystemExit("numpy is importable here: run through without_numpy()")
    snapshot = build_snapshot(build_catalog(tools=scaled_tools(size), cache=None), cache=None)
    sys.stdout.write(orjson.dumps(search_latency(snapshot, labelled_queries(), rounds, semantic=False)).decode())
    return 0


def labelled_queries() -> list[str]:
    return [q["query"] for q in orjson.loads((DATA / "search_queries.json").read_bytes())["queries"]]


def measure(
    size: int, queries: list[str], rounds: int, warm_runs: int, semantic: bool, search_only: bool = False
) -> dict[str, Any]:
    os.environ["PTC_PLUS_SEMANTIC"] = "off"
    specs = scaled_tools(size)
    snapshot, snapshot_s = timed(lambda: build_snapshot(build_catalog(tools=specs, cache=None), cache=None))
    result: dict[str, Any] = {"capabilities": len(snapshot.catalog.capabilities)}
    if not search_only:
        sdk, render_s = timed(render_sdk, specs)
        _, catalog_s = timed(build_catalog, tools=specs, cache=None)
        _, index_s = timed(build_index, snapshot.catalog.capabilities, snapshot.index.keywords)
        with tempfile.TemporaryDirectory(prefix="ptc-plus-bench-cache-") as scratch:
            first = through_cache(size, DiskCache(directory=Path(scratch)))
            warm = warm_in_new_processes(size, Path(scratch), warm_runs)
        result["sdk_chars"] = len(sdk.text)
        result["cold"] = {
            "render_sdk_s": round(render_s, 4),
            "build_catalog_s": round(catalog_s, 4),
            "build_snapshot_s": round(snapshot_s, 4),
            "build_index_s": round(index_s, 4),
        }
        result["first_session_build_and_store"] = {k: round(v, 4) for k, v in first.items()}
        result["warm_new_process"] = warm
    result["search_lexical"] = search_latency(snapshot, queries, rounds, semantic=False)
    result["search_lexical_without_numpy"] = without_numpy(size, rounds)
    if semantic and semantic_enabled({}):
        result["search_semantic"] = search_latency(snapshot, queries, rounds, semantic=True)
    print(size, orjson.dumps(result).decode(), flush=True)
    return result


def warm_child(size: int, directory: Path) -> int:
    found = through_cache(size, DiskCache(directory=directory))
    sys.stdout.write(orjson.dumps(found).decode())
    return 0


def main(argv: list[str]) -> int:
    if argv[:1] == ["--warm-child"]:
        return warm_child(int(argv[1]), Path(argv[2]))
    if argv[:1] == ["--without-numpy-child"]:
        return without_numpy_child(int(argv[1]), int(argv[2]))
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sizes", default="100,1000,10000")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--warm-runs", type=int, default=3)
    parser.add_argument("--semantic", action="store_true", help="also time search with the semantic layer")
    parser.add_argument("--search-only", action="store_true", help="time the searches only (no build timings)")
    parser.add_argument("--output", type=Path, default=RESULTS, help="where the results go")
    args = parser.parse_args(argv)
    queries = labelled_queries()
    report = {
        "version": 3,
        "python": platform.python_version(),
        "machine": platform.machine(),
        "load_average_at_start": [round(x, 2) for x in os.getloadavg()],
        "queries": len(queries),
        "rounds": args.rounds,
        "sizes": {
            size: measure(int(size), queries, args.rounds, args.warm_runs, args.semantic, args.search_only)
            for size in args.sizes.split(",")
        },
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_bytes(orjson.dumps(report, option=orjson.OPT_INDENT_2) + b"\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
