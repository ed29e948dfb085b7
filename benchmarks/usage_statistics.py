"""Usage statistics at scale (issue 11): observation and settlement per family, ``stats``, store size, the plan.

Run: .venv/bin/python benchmarks/usage_statistics.py
Writes benchmarks/results/usage_statistics.json (named so that it never shadows the standard ``statistics`` module).

- **Observation** (:class:`FamilyObserver`): one family of 1,000 available
  capabilities whose agent makes 10,000 calls into 50 of them; per family.
  Baseline in the same run: the same 10,000 calls counted in a plain ``dict``.
- **Settlement** (:meth:`StatisticsStore.record`): one new family of 1,000
  capabilities recorded into a store already holding 10,000 families ×
  1,000 capabilities (the file read, decoded, revised, compacted, encoded and
  atomically replaced under its lock). Baseline in the same run: reading and
  re-writing the same file unchanged (``read`` + ``os.replace`` of its bytes).
- **Store size** after 1,000 and after 10,000 families: it must stay flat
  (the retention bound), so the ratio is 10k / 1k.
- **``ptc-plus stats``** on that store (1,000 capabilities listed): the real
  executable, and in process (read + 1,000 look-ups). Baseline in the same run:
  ``ptc-plus gate --user x --json``, the cheapest command (interpreter start and
  imports).
- **The plan for 10,000 capabilities with statistics** (:func:`compute_plan`),
  target 50 ms; baseline in the same run: the same input with statistics
  unavailable. Also the plan's inputs read from a real 10,000-capability store.

The 10,000-family store is built the way compaction leaves it (the newest
``retention`` families per capability, the displaced ones retired) rather than
by 10,000 calls to ``record``; :func:`check_built_store` proves the two agree
on a smaller run, byte for byte.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import orjson

from hookspecs import AgentRef, ToolCall, ToolSpec
from ptc_plus.config import ManagementSection, PtcConfig, StatisticsSection
from ptc_plus.plan import PlanCandidate, PlanInput, ScopeStats, StatisticsVote, compute_plan
from ptc_plus.statistics import (
    DEFAULT_RETENTION,
    AgentOffers,
    Evidence,
    FamilyObserver,
    FamilySample,
    Offer,
    StatisticsStore,
)
from ptc_plus.statistics.codec import (
    VERSION,
    CapabilityRecord,
    FamilyRecord,
    RevisionRecord,
    StatisticsFile,
    encode,
    family_key,
)
from ptc_plus.statistics.store import RETIRED_CAP

RESULTS = Path(__file__).resolve().parent / "results" / "usage_statistics.json"
CLI = str(Path(sys.executable).with_name("ptc-plus"))
CAPABILITIES = 1_000
FAMILIES = 10_000
PLAN_CAPABILITIES = 10_000
CALLS = 10_000
REPEATS = 7
WINDOW, MIN_SAMPLES = 20, 5


def identity(n: int) -> str:
    return f"mcp:server{n % 40}/tool_{n:05d}"


def revision(n: int) -> str:
    return f"sha256:{n:016x}"


def used_by(family: int, n: int) -> bool:
    """Deterministic, skewed use: capability ``n`` is used by about 1 / (1 + n % 25) of the families."""
    return (family * 7919 + n * 104_729) % (1 + n % 25) == 0


def sample(family: int, capabilities: int = CAPABILITIES) -> FamilySample:
    return FamilySample(
        family_id=f"family-{family:06d}",
        workspace="/bench",
        plan_config_revision="sha256:bench",
        evidence=tuple(
            Evidence(
                identity=identity(n),
                revision=revision(n),
                disclosure="on-demand" if n % 3 else "full",
                used=used_by(family, n),
            )
            for n in range(capabilities)
        ),
    )


def built_store(families: int, capabilities: int = CAPABILITIES, retention: int = DEFAULT_RETENTION) -> StatisticsFile:
    """The file ``families`` calls of ``record`` leave (every capability available in every family)."""
    first = max(1, families - retention + 1)
    kept = range(first, families + 1)
    records = []
    for n in range(capabilities):
        records.append(
            CapabilityRecord(
                identity=identity(n),
                revisions=(
                    RevisionRecord(
                        revision=revision(n),
                        schema_revision="",
                        available=tuple(kept),
                        used=tuple(s for s in kept if used_by(s - 1, n)),
                        on_demand=tuple(kept) if n % 3 else (),
                    ),
                ),
            )
        )
    retired = tuple(family_key(f"family-{f - 1:06d}") for f in range(1, first))[-RETIRED_CAP:]
    return StatisticsFile(
        version=VERSION,
        next_sequence=families + 1,
        families=tuple(
            FamilyRecord(key=family_key(f"family-{s - 1:06d}"), sequence=s, plan_config_revision="sha256:bench")
            for s in kept
        ),
        retired=retired,
        capabilities=tuple(sorted(records, key=lambda r: r.identity)),
    )


def check_built_store(directory: Path) -> None:
    """The shortcut equals the real thing: 30 families × 40 capabilities, retention 12, recorded one by one."""
    store = StatisticsStore(directory / "check.json", retention=12)
    for family in range(30):
        store.record(sample(family, 40))
    assert store.path.read_bytes() == encode(built_store(30, 40, 12)), "built store differs from recorded one"


def best_of(action: Callable[[], object], repeats: int = REPEATS) -> tuple[float, float]:
    """(best, median) wall seconds. (This file is ``statistics.py``: the standard module of that name is
    shadowed when it runs as a script, so the median is computed here.)"""
    timings = []
    for _ in range(repeats):
        start = time.perf_counter()
        action()
        timings.append(time.perf_counter() - start)
    timings.sort()
    middle = len(timings) // 2
    median = timings[middle] if len(timings) % 2 else (timings[middle - 1] + timings[middle]) / 2
    return timings[0], median


def observation() -> dict[str, Any]:
    spec = {n: ToolSpec(name=f"tool_{n:05d}", source=f"mcp:server{n % 40}", description="") for n in range(50)}
    assert all(tool.identity == identity(n) for n, tool in spec.items())
    agent = AgentRef(session_id="s1", agent_id="a1", family_id="fam")
    offers = AgentOffers(
        workspace="/bench",
        config_revision="sha256:bench",
        offers={
            identity(n): Offer(identity=identity(n), revision=revision(n), disclosure="on-demand")
            for n in range(CAPABILITIES)
        },
    )
    calls = [
        (ToolCall(call_id=f"c{i}", tool=spec[i % 50].name, arguments={}, caller=agent), spec[i % 50])
        for i in range(CALLS)
    ]

    def observe() -> None:
        observer = FamilyObserver()
        observer.hold("fam", "s1", offers)
        for call, tool in calls:
            observer.dispatching(call, tool)
        settled = observer.settle("fam", "s1", {"s1"})
        assert sum(e.used for e in settled.workspaces[0].evidence) == 50

    def count() -> None:
        seen: dict[str, int] = {}
        for call, _ in calls:
            seen[call.tool] = seen.get(call.tool, 0) + 1

    best, median = best_of(observe)
    base, _ = best_of(count)
    return {
        "capabilities_available": CAPABILITIES,
        "calls": CALLS,
        "seconds_per_family_best": round(best, 6),
        "seconds_per_family_median": round(median, 6),
        "baseline_dict_count_seconds_best": round(base, 6),
        "ratio_to_baseline": round(best / base, 1),
    }


def settlement(directory: Path) -> tuple[dict[str, Any], Path]:
    path = directory / "workspace" / ".ptc-plus" / "statistics.json"
    path.parent.mkdir(parents=True)
    small = encode(built_store(1_000))
    full = encode(built_store(FAMILIES))
    path.write_bytes(full)
    store = StatisticsStore(path, root=directory / "workspace")
    counter = iter(range(FAMILIES, FAMILIES + 1_000))
    samples = [sample(next(counter)) for _ in range(REPEATS)]
    pending = iter(samples)
    best, median = best_of(lambda: store.record(next(pending)))
    view = store.read()
    assert view.status == "ok" and view.families() == FAMILIES + REPEATS, view.problem

    def rewrite() -> None:
        data = path.read_bytes()
        temporary = path.with_name("rewrite.tmp")
        temporary.write_bytes(data)
        os.replace(temporary, path)

    base, _ = best_of(rewrite)
    size = path.stat().st_size
    return (
        {
            "families_in_store": FAMILIES,
            "capabilities_per_family": CAPABILITIES,
            "record_seconds_best": round(best, 6),
            "record_seconds_median": round(median, 6),
            "baseline_read_replace_seconds_best": round(base, 6),
            "ratio_to_baseline": round(best / base, 1),
            "store_bytes_1k_families": len(small),
            "store_bytes_10k_families": len(full),
            "store_bytes_after_records": size,
            "size_ratio_10k_over_1k": round(len(full) / len(small), 3),
        },
        path.parent.parent,
    )


def stats_latency(workspace: Path, home: Path) -> dict[str, Any]:
    config = workspace / ".ptc-plus" / "config.toml"
    config.write_text(f"version = 1\n[statistics]\nwindow = {WINDOW}\nmin_samples = {MIN_SAMPLES}\n", "utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PTC_")} | {"XDG_CONFIG_HOME": str(home)}

    def run(*argv: str) -> bytes:
        done = subprocess.run([CLI, *argv], capture_output=True, env=env, check=True, timeout=300)
        return done.stdout

    document = orjson.loads(run("stats", "--workspace", str(workspace), "--scope", "workspace", "--json"))
    assert len(document["capabilities"]) >= CAPABILITIES
    best, median = best_of(lambda: run("stats", "--workspace", str(workspace), "--scope", "workspace", "--json"), 5)
    base, _ = best_of(lambda: run("gate", "--user", "x", "--workspace", str(workspace), "--json"), 5)
    store = StatisticsStore(workspace / ".ptc-plus" / "statistics.json")

    def in_process() -> None:
        view = store.read()
        for n in range(CAPABILITIES):
            view.stats(identity(n), revision(n), window=WINDOW, min_samples=MIN_SAMPLES)

    inner, _ = best_of(in_process)
    return {
        "capabilities_listed": len(document["capabilities"]),
        "cli_seconds_best": round(best, 4),
        "cli_seconds_median": round(median, 4),
        "baseline_cli_gate_seconds_best": round(base, 4),
        "ratio_to_baseline": round(best / base, 2),
        "in_process_read_and_lookups_seconds_best": round(inner, 6),
    }


def plan_input(statistics_vote: StatisticsVote, seed: int = 11) -> PlanInput:
    rng = random.Random(seed)
    candidates = []
    for n in range(PLAN_CAPABILITIES):
        local = rng.randint(0, WINDOW)
        candidates.append(
            PlanCandidate(
                identity=f"mcp:server{n % 50}/tool_{n:05d}",
                cost_tokens=rng.randint(40, 900),
                workspace=ScopeStats(coverage=rng.random() if local else None, samples=local),
                user=ScopeStats(coverage=rng.random(), samples=WINDOW),
            )
        )
    config = PtcConfig(
        management=ManagementSection(
            enabled=True, budget_tokens=8000, baseline=tuple(c.identity for c in candidates[:200])
        ),
        statistics=StatisticsSection(window=WINDOW, min_samples=MIN_SAMPLES),
    )
    return PlanInput(candidates=candidates, config=config, config_revision="sha256:bench", statistics=statistics_vote)


def plan_with_statistics(directory: Path) -> dict[str, Any]:
    with_statistics = plan_input(StatisticsVote.USABLE)
    without = attrs.evolve(with_statistics, statistics=StatisticsVote.UNAVAILABLE)
    best, median = best_of(lambda: compute_plan(with_statistics), 15)
    base, base_median = best_of(lambda: compute_plan(without), 15)
    plan = compute_plan(with_statistics)
    by_reason: dict[str, int] = {}
    for entry in plan.entries:
        by_reason[str(entry.reason)] = by_reason.get(str(entry.reason), 0) + 1
    # The plan's inputs from a real store of 10,000 capabilities (the store's own bound).
    path = directory / "plan-store.json"
    path.write_bytes(encode(built_store(DEFAULT_RETENTION, PLAN_CAPABILITIES)))
    store = StatisticsStore(path)

    def inputs() -> None:
        view = store.read()
        for n in range(PLAN_CAPABILITIES):
            view.stats(identity(n), revision(n), window=WINDOW, min_samples=MIN_SAMPLES)

    read_best, _ = best_of(inputs, 3)
    return {
        "capabilities": PLAN_CAPABILITIES,
        "compute_plan_seconds_best": round(best, 6),
        "compute_plan_seconds_median": round(median, 6),
        "target_seconds": 0.05,
        # The median, not the best: on a shared machine the best run says what the code can do, the median what
        # a session start will see.
        "within_target": median <= 0.05,
        "baseline_without_statistics_seconds_best": round(base, 6),
        "baseline_without_statistics_seconds_median": round(base_median, 6),
        "ratio_to_baseline": round(best / base, 2),
        "ratio_to_baseline_median": round(median / base_median, 2),
        "reasons": dict(sorted(by_reason.items())),
        "store_read_and_lookups_seconds_best": round(read_best, 4),
        "store_bytes": path.stat().st_size,
    }


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="ptc-stats-bench-") as scratch:
        directory = Path(scratch)
        check_built_store(directory)
        settled, workspace = settlement(directory)
        result = {
            "version": 1,
            "benchmark": "statistics",
            "repeats": REPEATS,
            "machine": {"cpus": os.cpu_count(), "load_average_1m": round(os.getloadavg()[0], 2)},
            "observation": observation(),
            "settlement": settled,
            "stats": stats_latency(workspace, directory / "xdg"),
            "plan": plan_with_statistics(directory),
        }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_bytes(orjson.dumps(result, option=orjson.OPT_INDENT_2) + b"\n")
    print(orjson.dumps(result, option=orjson.OPT_INDENT_2).decode())


if __name__ == "__main__":
    main()
