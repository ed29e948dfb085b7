"""The results file and the README rendered from it: totals, ratios, the completed subset, per-task regressions.

The results are built by hand so every number the report prints can be checked
against arithmetic written here.
"""

from __future__ import annotations

import math
from pathlib import Path

import attrs
import orjson
import pytest

from ptc_plus.evaluation import charts, report, results
from ptc_plus.evaluation.charts import ChartOutcome
from ptc_plus.evaluation.results import MODEL, Results, RunRecord, UnknownResultsVersion

STYLES = ("native", "tool-search", "ptc", "ptc-plus-cold", "ptc-plus-mature")


def run(
    task: str,
    style: str,
    cached: int | None,
    uncached: int | None,
    output: int | None,
    requests: int,
    *,
    catalog: int = 20,
    passed: bool = True,
    reason: str = "",
    repetition: int = 0,
) -> RunRecord:
    known = None not in (cached, uncached, output)
    return RunRecord(
        task=task,
        category="aggregate" if task == "a" else "one-call",
        style=style,
        catalog=catalog,
        requests=requests,
        input_cached=cached,
        input_uncached=uncached,
        output=output,
        total=(cached or 0) + (uncached or 0) + (output or 0) if known else None,
        first_request_input=uncached,
        passed=passed,
        reason=reason,
        repetition=repetition,
    )


def scripted() -> Results:
    runs = (
        # task a: PTC Plus cheaper than PTC.            totals
        run("a", "native", 100, 200, 10, 3),  # 310
        run("a", "tool-search", 50, 100, 20, 4),  # 170
        run("a", "ptc", 80, 120, 10, 2),  # 210
        run("a", "ptc-plus-cold", 70, 100, 10, 2),  # 180
        run("a", "ptc-plus-mature", 60, 90, 10, 2),  # 160
        # task b: cold costs more than PTC; mature fails its oracle.
        run("b", "native", 10, 20, 5, 1),  # 35
        run("b", "tool-search", 10, 30, 5, 2),  # 45
        run("b", "ptc", 20, 30, 5, 1),  # 55
        run("b", "ptc-plus-cold", 30, 40, 5, 2),  # 75
        run("b", "ptc-plus-mature", 20, 30, 5, 1, passed=False, reason="the number 42 is\nmissing"),  # 55
    )
    return Results(
        suite_version="7",
        unit="o200k tokens (counted per request part)",
        catalogs=(20,),
        styles=STYLES,
        tasks=("a", "b"),
        measured_at="2026-11-30T00:00:00+00:00",
        python="3.11.7",
        platform="linux x86_64",
        command="ptc-plus eval --catalog 20",
        runs=runs,
    )


SKIPPED = ChartOutcome(skipped="Charts were skipped: matplotlib is not installed.")


def test_totals_per_style_over_all_tasks_and_the_completed_subset() -> None:
    text = report.render(scripted(), SKIPPED)
    all_tasks = text.split("### All tasks (2)")[1].split("###")[0]
    # native: cached 100+10, uncached 200+20, output 10+5, total 310+35, requests 3+1.
    # cost (default sheet): 110 x 0.1 + 220 x 1 + 15 x 5 = 306.
    assert f"| native | 110 | 220 | 15 | 345 | {bill(110, 220, 15):.0f} | 4 | 2 | 0 | 0 |" in all_tasks
    assert bill(110, 220, 15) == pytest.approx(306)
    # cold: 70+30, 100+40, 10+5, 180+75, 2+2.
    assert f"| ptc-plus-cold | 100 | 140 | 15 | 255 | {bill(100, 140, 15):.0f} | 4 | 2 | 0 | 0 |" in all_tasks
    assert f"| ptc-plus-mature | 80 | 120 | 15 | 215 | {bill(80, 120, 15):.0f} | 3 | 1 | 1 | 0 |" in all_tasks
    # b failed in one style: the completed subset is a alone.
    subset = text.split("### The subset every style completed (1 of 2)")[1].split("###")[0]
    assert f"| native | 100 | 200 | 10 | 310 | {bill(100, 200, 10):.0f} | 3 | 1 | 0 | 0 |" in subset
    assert f"| ptc-plus-mature | 60 | 90 | 10 | 160 | {bill(60, 90, 10):.0f} | 2 | 1 | 0 | 0 |" in subset


def test_a_not_runnable_style_is_shown_as_such_never_as_a_failure_nor_in_a_sum() -> None:
    base = scripted()
    blocked = [
        attrs.evolve(r, state=results.NOT_RUNNABLE, passed=False, reason="PTC-7430: 193708 tokens", requests=0)
        if r.style == "ptc"
        else r
        for r in base.runs
    ]
    both = [attrs.evolve(r, style="ptc-plus-both") for r in base.runs if r.style == "ptc-plus-cold"]
    text = report.render(attrs.evolve(base, runs=(*blocked, *both), styles=(*STYLES, "ptc-plus-both")), SKIPPED)
    all_tasks = text.split("### All tasks (2)")[1].split("###")[0]
    not_runnable = " | ".join(["not runnable"] * 6)
    assert f"| ptc | {not_runnable} | 0 | 0 | 2 |" in all_tasks
    # ptc has no run to fail: the completed subset still holds a (b failed in ptc-plus-mature).
    assert "### The subset every style completed (1 of 2)" in text
    raw = text.split("### Raw tokens")[1].split("##")[0]
    assert "| 20 | ptc-plus-cold / ptc | not runnable | not runnable |" in raw
    assert "| 20 | ptc-plus-both / native-sequential |" not in raw  # a baseline without runs is not compared
    assert "| 20 | ptc-plus-both / native |" in raw
    failures = text.split("## Failures")[1]
    assert "ptc, catalog" not in failures and "ptc-plus-mature, catalog 20" in failures
    assert "## Not runnable" in text and "- ptc, catalog 20: 2 run(s) (a, b); PTC-7430: 193708 tokens" in text
    assert "**ptc-search**" not in text.split("## Method")[1].split("##")[0]
    method = text.split("## Method")[1].split("Metering")[0]
    assert "**ptc-plus-both**: PTC Plus cold with the `both` presentation" in method


def bill(cached: float, uncached: float, output: float) -> float:
    """The default sheet written out: cache reads a tenth of an uncached token, output five."""
    return cached * 0.1 + uncached * 1 + output * 5


def geomean(*ratios: float) -> float:
    return math.prod(ratios) ** (1 / len(ratios))


def test_headline_ratios_tokens_and_requests() -> None:
    text = report.render(scripted(), SKIPPED)
    raw = text.split("### Raw tokens")[1].split("##")[0]
    # cold / native: tokens 255/345 = 0.739 all, 180/310 = 0.581 completed; per task a 180/310, b 75/35:
    # geomean 1.12, median (the mean of two) 1.36; requests 4/4, 2/3.
    assert f"{geomean(180 / 310, 75 / 35):.2f}" == "1.12"
    assert "| 20 | ptc-plus-cold / native | 0.74 | 0.58 | 1.12 | 1.36 | 1.00 | 0.67 |" in raw
    # cold / ptc: 255/265 = 0.962, 180/210 = 0.857; per task 180/210, 75/55; requests 4/3 = 1.33, 2/2.
    g, m = geomean(180 / 210, 75 / 55), (180 / 210 + 75 / 55) / 2
    assert f"| 20 | ptc-plus-cold / ptc | 0.96 | 0.86 | {g:.2f} | {m:.2f} | 1.33 | 1.00 |" in raw
    # mature / tool-search: 215/215 = 1.00, 160/170 = 0.941; requests 3/6 = 0.50, 2/4 = 0.50.
    g, m = geomean(160 / 170, 55 / 45), (160 / 170 + 55 / 45) / 2
    assert f"| 20 | ptc-plus-mature / tool-search | 1.00 | 0.94 | {g:.2f} | {m:.2f} | 0.50 | 0.50 |" in raw


def test_headline_ratios_cost_weighted_from_the_counted_parts() -> None:
    text = report.render(scripted(), SKIPPED)
    weighted = text.split("### Cost-weighted (price sheet `default`)")[1].split("###")[0]
    # cold / native by the bill: per task a and b priced from their own cached / uncached / output counts.
    cold_a, cold_b, native_a, native_b = bill(70, 100, 10), bill(30, 40, 5), bill(100, 200, 10), bill(10, 20, 5)
    cells = [
        (cold_a + cold_b) / (native_a + native_b),
        cold_a / native_a,  # the completed subset is a alone
        geomean(cold_a / native_a, cold_b / native_b),
        (cold_a / native_a + cold_b / native_b) / 2,
    ]
    assert "| 20 | ptc-plus-cold / native | " + " | ".join(f"{c:.2f}" for c in cells) + " |" in weighted
    # Weighting changes the verdict: tool search's output-heavy a costs more by the bill than raw (output 5x).
    assert bill(50, 100, 20) / bill(70, 100, 10) != pytest.approx(170 / 180)


def test_a_huge_task_carries_the_sum_but_not_the_geometric_mean_or_median() -> None:
    measured = scripted()
    huge = (
        run("h", "native", 0, 1_000_000, 0, 1),
        run("h", "ptc-plus-cold", 0, 10_000, 0, 1),
        *(run("h", s, 0, 1_000_000, 0, 1) for s in ("tool-search", "ptc", "ptc-plus-mature")),
    )
    text = report.render(attrs.evolve(measured, runs=(*measured.runs, *huge), tasks=("a", "b", "h")), SKIPPED)
    raw = text.split("### Raw tokens")[1].split("##")[0]
    row = next(line for line in raw.splitlines() if line.startswith("| 20 | ptc-plus-cold / native |"))
    cells = row.split(" | ")
    # The sum: (180 + 75 + 10,000) / (310 + 35 + 1,000,000): the one huge task makes it 0.01.
    assert cells[2] == f"{(180 + 75 + 10_000) / (310 + 35 + 1_000_000):.2f}" == "0.01"
    # Each task weighs the same in the geometric mean and the median: b's loss (2.14) still shows.
    assert cells[4] == f"{geomean(180 / 310, 75 / 35, 0.01):.2f}"
    assert cells[5] == f"{180 / 310:.2f}"  # the median of 0.01, 0.58, 2.14


def test_per_task_ratios_count_the_tasks_where_ptc_plus_loses() -> None:
    text = report.render(scripted(), SKIPPED)
    # b: cold 75 / ptc 55 = 1.36 (a loss the suite total hides); mature 55/55 is not worse.
    assert "| b | one-call | 35 (1) | 45 (2) | 55 (1) | 75 (2) | 55 (1) ✗ | 1.36 | 1.00 |" in text
    assert "| a | aggregate | 310 (3) | 170 (4) | 210 (2) | 180 (2) | 160 (2) | 0.86 | 0.76 |" in text
    # Each loss says why: the ratio, both runs' requests, the part whose difference is the largest.
    # b: cold (30, 40, 5) against ptc (20, 30, 5): cached and uncached both +10, the first named wins the tie.
    assert (
        "**ptc-plus-cold** costs more tokens than **ptc** on 1 of 2 tasks: "
        "b (1.36x; 2 vs 1 requests; most of it cached input, +10 tokens)." in text
    )
    assert "**ptc-plus-mature** costs more tokens than **ptc** on 0 of 2 tasks." in text
    # Against every baseline, naming the tasks: b's cold 75 > native 35 and > tool-search 45; a's 180 < 310, > 170.
    assert (
        "**ptc-plus-cold** costs more tokens than **native** on 1 of 2 tasks: "
        "b (2.14x; 2 vs 1 requests; most of it cached input, +20 tokens)." in text
    )
    assert (
        "**ptc-plus-cold** costs more tokens than **tool-search** on 2 of 2 tasks: "
        "a (1.06x; 2 vs 4 requests; most of it cached input, +20 tokens); "
        "b (1.67x; 2 vs 2 requests; most of it cached input, +20 tokens)." in text
    )
    # By the bill, tool search's output-heavy a (20 output tokens) is dearer than cold's: only b is a loss, and
    # priced, its uncached +10 outweighs its cached +20 (at 0.1x).
    assert bill(70, 100, 10) < bill(50, 100, 20) and bill(30, 40, 5) > bill(10, 30, 5)
    assert bill(30, 40, 5) / bill(10, 30, 5) == pytest.approx(68 / 56)
    assert (
        "**ptc-plus-cold** costs more by the `default` bill than **tool-search** on 1 of 2 tasks: "
        "b (1.21x; 2 vs 2 requests; most of it uncached input, +10 on the bill)." in text
    )


def test_method_regeneration_failures_and_skipped_charts() -> None:
    text = report.render(scripted(), SKIPPED)
    assert "```\nptc-plus eval --catalog 20\n```" in text
    assert "unit: **o200k tokens (counted per request part)**" in text
    assert "longest common prefix" in text
    assert "task suite version 7" in text
    assert "- b, ptc-plus-mature, catalog 20: the number 42 is missing" in text
    assert text.rstrip().endswith("Charts were skipped: matplotlib is not installed.")


def test_real_model_mode_unknown_stays_unknown_and_the_spread_is_shown() -> None:
    runs = (
        run("a", "native", 20, 80, 10, 2, repetition=0),  # 110
        run("a", "native", 20, 100, 10, 2, repetition=1),  # 130
        run("a", "ptc", None, None, 10, 2, repetition=0),  # the provider did not say
        run("a", "ptc", 10, 40, 10, 2, repetition=1),  # 60
    )
    measured = Results(
        suite_version="1",
        unit="provider-reported tokens",
        mode=MODEL,
        model="m-1",
        repetitions=2,
        catalogs=(20,),
        styles=("native", "ptc"),
        tasks=("a",),
        measured_at="x",
        python="3.11.7",
        platform="linux",
        command="ptc-plus eval --model m-1 --repeat 2",
        runs=runs,
    )
    text = report.render(measured, SKIPPED)
    assert "real model `m-1`, 2 repetition(s)" in text
    # native: the mean over repetitions: cached 20, uncached 90, output 10, total 120.
    # cost: the mean of each repetition's bill, (2 + 80 + 50 + 2 + 100 + 50) / 2.
    cost = (bill(20, 80, 10) + bill(20, 100, 10)) / 2
    assert f"| native | 20 | 90 | 10 | 120 | {cost:.0f} | 2 | 1 | 0 | 0 |" in text
    # A repetition whose split is unknown makes the bill unknown too: never priced as zero.
    assert "| ptc | unknown | unknown | 10 | unknown | unknown | 2 | 1 | 0 | 0 |" in text
    # spread of native's suite total: 110 and 130 → mean 120, stdev 14.14.
    assert "| 20 | native | 120 | 110 | 130 | 14 |" in text
    assert "| 20 | ptc | unknown | unknown | unknown | unknown |" in text


def test_results_round_trip_atomically_and_keep_unknown_as_null(tmp_path: Path) -> None:
    measured = scripted()
    unknown = run("c", "ptc", None, None, None, 0, passed=False, reason="HOST-0310: down")
    measured = attrs.evolve(measured, runs=(*measured.runs, unknown))
    path = tmp_path / "out" / "results.json"
    results.write(measured, path)
    assert results.read(path) == measured
    assert sorted(p.name for p in path.parent.iterdir()) == ["results.json"]  # no temporary file left
    raw = orjson.loads(path.read_bytes())
    assert raw["version"] == 1
    assert raw["runs"][-1]["input_cached"] is None and raw["runs"][-1]["total"] is None


def test_an_unknown_results_version_is_refused(tmp_path: Path) -> None:
    raw = orjson.loads(results.dumps(scripted()))
    raw["version"] = 99
    with pytest.raises(UnknownResultsVersion):
        results.loads(orjson.dumps(raw))


def test_without_matplotlib_charts_are_skipped_with_the_way_to_get_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(charts, "available", lambda: False)
    outcome = charts.draw(scripted(), tmp_path)
    assert outcome.files == ()
    assert "pip install -e '.[eval]'" in outcome.skipped
    assert list(tmp_path.iterdir()) == []
    written = report.write_report(scripted(), tmp_path, outcome)
    assert "pip install -e '.[eval]'" in written.read_text(encoding="utf-8")


def test_with_matplotlib_the_three_charts_are_drawn(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    outcome = charts.draw(scripted(), tmp_path)
    assert [name for name, _ in outcome.files] == [charts.TOTALS_PNG, charts.PROMPT_PNG, charts.REQUESTS_PNG]
    for name, _ in outcome.files:
        assert (tmp_path / name).read_bytes().startswith(b"\x89PNG")
    text = report.render(scripted(), outcome)
    assert f"]({charts.TOTALS_PNG})" in text


def test_charts_skip_what_is_unknown(tmp_path: Path) -> None:
    """A provider that reported no usage: no chart of token counts is drawn (none is drawn as zero)."""
    pytest.importorskip("matplotlib")
    unknown = tuple(
        attrs.evolve(r, input_cached=None, input_uncached=None, output=None, total=None, first_request_input=None)
        for r in scripted().runs
    )
    measured = attrs.evolve(scripted(), mode=MODEL, model="m-1", runs=unknown)
    (tmp_path / charts.TOTALS_PNG).write_bytes(b"an earlier run's chart")
    outcome = charts.draw(measured, tmp_path)
    assert [name for name, _ in outcome.files] == [charts.REQUESTS_PNG]  # requests are counted by the host
    assert len(outcome.unknown) == 2
    assert not (tmp_path / charts.TOTALS_PNG).exists()
    text = report.render(measured, outcome)
    assert (
        "*Total tokens per style per catalog size (all tasks)*: not drawn: every value it would show is unknown."
        in text
    )
    # One style known (native, both tasks), the others not: the known one is drawn, the rest left out.
    known = tuple(r for r in scripted().runs if r.style == "native")
    partial = attrs.evolve(measured, runs=(*(r for r in unknown if r.style != "native"), *known))
    assert [name for name, _ in charts.draw(partial, tmp_path).files] == [
        charts.TOTALS_PNG,
        charts.PROMPT_PNG,
        charts.REQUESTS_PNG,
    ]
