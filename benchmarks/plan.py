"""Plan computation for 1,000 and 10,000 capabilities (issue 5).

Run: /work/venv/bin/python benchmarks/plan.py
Writes benchmarks/results/plan.json. Each size is measured against a
baseline in the same run: sorting the same candidates by identity (the
least any deterministic plan must do), so the ratio says how much the plan
costs beyond an O(n log n) pass, independent of the machine's speed.
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import orjson

from ptc_plus.config import CapabilityChoice, Disclosure, ManagementSection, PtcConfig
from ptc_plus.plan import PlanCandidate, PlanInput, ScopeStats, compute_plan, plan_bytes

SIZES = (1_000, 10_000)
REPEATS = 7
RESULTS = Path(__file__).resolve().parent / "results" / "plan.json"


def make_input(size: int, seed: int = 7) -> PlanInput:
    rng = random.Random(seed)
    candidates = []
    for n in range(size):
        stats = ScopeStats(coverage=rng.random(), samples=rng.randint(0, 30)) if rng.random() < 0.6 else None
        candidates.append(
            PlanCandidate(
                identity=f"mcp:server{n % 50}/tool_{n:05d}",
                cost_tokens=rng.randint(40, 900),
                workspace=stats,
                user=ScopeStats(coverage=rng.random(), samples=rng.randint(0, 30)),
            )
        )
    rng.shuffle(candidates)
    choices = {c.identity: CapabilityChoice(disclosure=rng.choice(list(Disclosure))) for c in candidates[: size // 20]}
    config = PtcConfig(
        management=ManagementSection(
            enabled=True, budget_tokens=8000, baseline=tuple(c.identity for c in candidates[size // 20 : size // 10])
        ),
        capabilities=choices,
    )
    return PlanInput(candidates=candidates, config=config, config_revision="sha256:bench")


def best_of(action: Callable[[], object]) -> tuple[float, float]:
    """(best, median) wall seconds over :data:`REPEATS` runs."""
    timings = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        action()
        timings.append(time.perf_counter() - start)
    return min(timings), statistics.median(timings)


def measure(size: int) -> dict[str, object]:
    plan_input = make_input(size)
    base_best, _ = best_of(lambda: sorted(plan_input.candidates, key=lambda c: c.identity))
    plan_best, plan_median = best_of(lambda: compute_plan(plan_input))
    plan = compute_plan(plan_input)
    assert plan_bytes(plan) == plan_bytes(compute_plan(plan_input)), "plan must be deterministic"
    return {
        "capabilities": size,
        "plan_seconds_best": round(plan_best, 6),
        "plan_seconds_median": round(plan_median, 6),
        "baseline_sort_seconds_best": round(base_best, 6),
        "ratio_plan_to_sort": round(plan_best / base_best, 1),
        "full": len(plan.members(Disclosure.FULL)),
        "used_tokens": plan.used_tokens,
        "overage_tokens": plan.overage_tokens,
        "plan_bytes": len(plan_bytes(plan)),
    }


def main() -> None:
    rows = [measure(size) for size in SIZES]
    scaling = float(rows[1]["plan_seconds_best"]) / float(rows[0]["plan_seconds_best"])  # type: ignore[arg-type]
    result = {
        "version": 1,
        "benchmark": "plan",
        "repeats": REPEATS,
        "sizes": rows,
        "scaling_10k_over_1k": round(scaling, 1),
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_bytes(orjson.dumps(result, option=orjson.OPT_INDENT_2) + b"\n")
    print(orjson.dumps(result, option=orjson.OPT_INDENT_2).decode())


if __name__ == "__main__":
    main()
