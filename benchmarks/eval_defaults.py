"""Choose PTC Plus's numeric defaults on the warm-up set (issue 15 item 6, ADR 0080; issue 27 item 5, ADR 0108).

Run: .venv/bin/python benchmarks/eval_defaults.py [--catalog N ...]
Writes benchmarks/results/eval_defaults.json.

The measured tasks are never used here: the warm-up set is both the history
(its families build the statistics) and the tasks the settings are judged on,
so choosing on it and reporting on the measured set (``ptc-plus eval``) keeps
the report free of what the choice saw.

Per catalog size:

- the warm-up families run once, with the plugin's defaults, into one
  statistics store (what a user's history would be; the settings below only
  change how the store *votes*, not what it records);
- the baseline in the same run: every warm-up task in PTC (management off);
- per ``budget_tokens`` and ``[context] discovery_tokens``: every warm-up task in
  PTC Plus cold (no statistics: a new user's first sessions; only these can change them);
- every combination of ``budget_tokens`` × ``threshold`` × ``min_samples``
  runs every warm-up task in PTC Plus mature from that store;
- every warm-up task in PTC Plus cold with the ``both`` presentation, at the defaults
  (whether ``[runtime] presentation = "both"`` would be the better default).

Every run is metered as ``ptc-plus eval`` meters it (ADR 0096, 0108): the 3k host
prompt, the minimum cacheable prefix, and the ``default`` price sheet's cost
(cached input 0.1x, uncached 1x, output 5x) beside the raw total.

A combination qualifies when every run (cold and mature) passes its oracle; the
chosen one has the lowest cost of cold plus mature, summed over the
catalog sizes — a default must serve a new user as well as one with history
(ADR 0108; before it the raw total decided). ``discovery_tokens`` is then chosen
on the cold runs at the chosen budget (mature runs use its default). Among combinations with
that same total, each setting keeps its previous default where it can (a
default changes only where a measured difference says so; ties then go to the
larger threshold, the smaller budget, the larger min_samples). ``window`` is not varied: the store holds
:data:`~ptc_plus.evaluation.matrix.WARMUP_FAMILIES` families, fewer than any
window considered, so it cannot bind here; that is said in the results.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import platform
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parent.parent
# Run as a script, this directory comes first on sys.path, where benchmarks/mcp.py would shadow the MCP SDK.
sys.path[:] = [str(ROOT)] + [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from ptc_plus.evaluation.host_prompt import DEFAULT_SETTING, SETTINGS, host_prompt  # noqa: E402
from ptc_plus.evaluation.loading import load_suite  # noqa: E402
from ptc_plus.evaluation.matrix import WARMUP_FAMILIES  # noqa: E402
from ptc_plus.evaluation.mcp_bridge import McpBridge  # noqa: E402
from ptc_plus.evaluation.metering import UNIT, Meter, o200k_counter  # noqa: E402
from ptc_plus.evaluation.prices import DEFAULT as PRICES  # noqa: E402
from ptc_plus.evaluation.prices import cost  # noqa: E402
from ptc_plus.evaluation.runner import Parameters, run_task, warm_up  # noqa: E402
from ptc_plus.evaluation.styles import DEFAULTS  # noqa: E402
from ptc_plus.evaluation.task import Style, Suite  # noqa: E402

BUDGETS = (2000, 8000)
THRESHOLDS = (0.05, 0.1, 0.2, 0.3)
MIN_SAMPLES = (5,)
"""Only the default: with :data:`~ptc_plus.evaluation.matrix.WARMUP_FAMILIES` families every used capability has
more samples than any value considered, so it cannot bind here (ADR 0080 measured 3 and 5 alike)."""
DISCOVERY = (1000, 2000)
"""``[context] discovery_tokens`` values the cold runs try (2,000: the default before ADR 0108)."""
CATALOGS = (20, 200, 2000)
OUT = ROOT / "benchmarks" / "results" / "eval_defaults.json"
PARTIAL = Path(tempfile.gettempdir()) / "ptc-plus-eval-defaults-partial.json"
"""The catalogs measured so far, rewritten after each one (a sweep takes long; nothing measured is lost)."""
PREVIOUS: dict[str, Any] = {"budget": 8000, "threshold": 0.1, "min_samples": 5, "discovery": 2000}
"""The defaults before this sweep (ADR 0080): kept where the sweep measures no difference."""


async def _tasks_total(
    suite: Suite,
    style: Style,
    catalog: int,
    workdir: Path,
    meter: Meter,
    bridge: McpBridge,
    parameters: Parameters = DEFAULTS,
    statistics: Path | None = None,
) -> dict[str, Any]:
    """Every warm-up task in ``style``: total tokens, requests, and the runs that failed their oracle."""
    total = requests = 0
    bill = 0.0
    failed: list[str] = []
    not_runnable: list[str] = []
    for task in suite.warmup:
        result = await run_task(
            suite, task, style, catalog, workdir=workdir, parameters=parameters, statistics=statistics, mcp=bridge
        )
        metered = meter.meter(result.exchanges).total
        total += metered.total or 0
        requests += metered.requests
        priced = cost(
            PRICES,
            cached=metered.input_cached,
            uncached=metered.input_uncached,
            written=metered.input_written,
            output=metered.output,
        )
        bill += priced or 0.0
        if result.not_runnable:  # PTC at 2,000 tools: its prompt exceeds the context; a record, not a failure
            not_runnable.append(task.id)
        elif not result.verdict.passed:
            failed.append(f"{task.id}: {result.verdict.reason}")
    return {
        "total": total,
        "cost": round(bill, 1),
        "requests": requests,
        "failed": failed,
        "not_runnable": not_runnable,
    }


def _ratio(num: dict[str, Any], den: dict[str, Any], key: str) -> float | None:
    """``num / den`` of ``key``; ``None`` where either side has a run that could not run (never a zero)."""
    if num.get("not_runnable") or den.get("not_runnable") or not den[key]:
        return None
    return round(float(num[key]) / float(den[key]), 4)


async def sweep(catalogs: tuple[int, ...]) -> dict[str, Any]:
    suite = load_suite(ROOT / "benchmarks" / "tasks")
    counter = o200k_counter()
    per_catalog: dict[str, Any] = {}
    # Every threshold at the default budget, and the smaller budget at the default threshold: ADR 0080 measured
    # budgets 4,000-16,000 alike, so the full product would spend most of its hours on equal runs.
    combos = [(8000, t, m) for t in THRESHOLDS for m in MIN_SAMPLES] + [(2000, PREVIOUS["threshold"], 5)]
    with tempfile.TemporaryDirectory(prefix="ptc-plus-eval-defaults-") as scratch:
        workdir = Path(scratch)
        meter = Meter(counter, host_prompt=host_prompt(SETTINGS[DEFAULT_SETTING], counter.count), run_root=workdir)
        async with McpBridge.time_server() as bridge:
            for catalog in catalogs:
                print(f"catalog {catalog}: warm-up ({WARMUP_FAMILIES} families)", file=sys.stderr)
                store = await warm_up(suite, catalog, workdir=workdir, families=WARMUP_FAMILIES, mcp=bridge)
                # The runs empty workdir/run only; keep the store where no run writes.
                kept = workdir / f"statistics-{catalog}.json"
                kept.write_bytes(store.read_bytes())
                entry: dict[str, Any] = {
                    "ptc": await _tasks_total(suite, Style.PTC, catalog, workdir, meter, bridge),
                    "cold": {},
                    # ADR 0108: the `both` presentation (PTC Plus cold, full tools also offered directly).
                    "both": await _tasks_total(suite, Style.PTC_PLUS_BOTH, catalog, workdir, meter, bridge),
                    "mature": {},
                }
                for budget, discovery in itertools.product(BUDGETS, DISCOVERY):
                    print(f"catalog {catalog}: cold, budget {budget}, discovery {discovery}", file=sys.stderr)
                    cold = Parameters(budget_tokens=budget, discovery_tokens=discovery)
                    entry["cold"][_cold_key(budget, discovery)] = await _tasks_total(
                        suite, Style.PTC_PLUS_COLD, catalog, workdir, meter, bridge, cold
                    )
                for number, (budget, threshold, min_samples) in enumerate(combos, start=1):
                    print(f"catalog {catalog}: combination {number}/{len(combos)}", file=sys.stderr)
                    parameters = Parameters(budget_tokens=budget, threshold=threshold, min_samples=min_samples)
                    key = f"budget={budget} threshold={threshold} min_samples={min_samples}"
                    entry["mature"][key] = await _tasks_total(
                        suite, Style.PTC_PLUS_MATURE, catalog, workdir, meter, bridge, parameters, kept
                    )
                per_catalog[str(catalog)] = entry
                PARTIAL.write_bytes(orjson.dumps(per_catalog, option=orjson.OPT_INDENT_2))  # a crash keeps these
    return {"catalogs": per_catalog, "combinations": [list(c) for c in combos]}


def _cold_key(budget: int, discovery: int) -> str:
    return f"budget={budget} discovery_tokens={discovery}"


def choose(measured: dict[str, Any]) -> dict[str, Any]:
    """The qualifying combination with the lowest cold + mature cost over every catalog size (ties: keep),
    then the ``discovery_tokens`` whose cold runs at the chosen budget cost least (ties: keep)."""
    catalogs = measured["catalogs"]
    previous = PREVIOUS["discovery"]
    candidates = []
    for budget, threshold, min_samples in measured["combinations"]:
        key = f"budget={budget} threshold={threshold} min_samples={min_samples}"
        cold_key = _cold_key(budget, previous)
        runs = [catalogs[c][kind][k] for c in catalogs for kind, k in (("cold", cold_key), ("mature", key))]
        if any(run["failed"] for run in runs):
            continue
        bill = round(sum(run["cost"] for run in runs), 1)
        changed = (
            budget != PREVIOUS["budget"],
            threshold != PREVIOUS["threshold"],
            min_samples != PREVIOUS["min_samples"],
        )
        candidates.append((bill, changed, -threshold, budget, -min_samples, key))
    if not candidates:
        return {"chosen": None, "reason": "no combination passed every oracle"}
    candidates.sort()
    bill, *_, key = candidates[0]
    budget = int(key.split()[0].removeprefix("budget="))
    discovery_options = []
    for discovery in DISCOVERY:
        runs = [catalogs[c]["cold"][_cold_key(budget, discovery)] for c in catalogs]
        if not any(run["failed"] for run in runs):
            discovery_options.append((round(sum(r["cost"] for r in runs), 1), discovery != previous, discovery))
    discovery_options.sort()
    discovery = discovery_options[0][2] if discovery_options else previous
    cold_key = _cold_key(budget, previous)
    ratios = {
        catalog: {
            "cost mature/ptc": _ratio(entry["mature"][key], entry["ptc"], "cost"),
            "cost cold/ptc": _ratio(entry["cold"][cold_key], entry["ptc"], "cost"),
            "cost mature/cold": _ratio(entry["mature"][key], entry["cold"][cold_key], "cost"),
            "cost both/cold": _ratio(entry["both"], entry["cold"][cold_key], "cost"),
            "tokens mature/ptc": _ratio(entry["mature"][key], entry["ptc"], "total"),
            "tokens cold/ptc": _ratio(entry["cold"][cold_key], entry["ptc"], "total"),
        }
        for catalog, entry in catalogs.items()
    }
    return {
        "chosen": key,
        "cost": bill,
        "discovery_tokens": discovery,
        "discovery_costs": {str(d): c for c, _, d in discovery_options},
        "ratios": ratios,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--catalog", type=int, action="append", help="catalog sizes (default: 20 200 2000)")
    parser.add_argument("--output", type=Path, default=OUT)
    args = parser.parse_args()
    catalogs = tuple(args.catalog or CATALOGS)
    measured = asyncio.run(sweep(catalogs))
    result = {
        "version": 1,
        "python": platform.python_version(),
        "measured_at": datetime.now(UTC).replace(microsecond=0).isoformat(),
        "unit": UNIT,
        "warmup_families": WARMUP_FAMILIES,
        "host_prompt": DEFAULT_SETTING,
        "prices": PRICES.name,
        "window_note": "window not varied: the store holds fewer families than any window considered",
        **measured,
        **choose(measured),
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_bytes(orjson.dumps(result, option=orjson.OPT_INDENT_2) + b"\n")
    print(orjson.dumps(choose(measured), option=orjson.OPT_INDENT_2).decode())


if __name__ == "__main__":
    main()
