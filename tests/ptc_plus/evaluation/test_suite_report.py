"""The report over two suites, the charts' not-runnable and unknown cells, and what makes a run reproducible.

Results are built by hand (as in ``test_report.py``); the charts are drawn on a
recording stand-in for ``pyplot``, so a test can say what was plotted, not
only that a PNG exists.
"""

from __future__ import annotations

import math
import textwrap
from pathlib import Path
from typing import Any

import attrs
import pytest

from ptc_plus.evaluation import charts, suite_report
from ptc_plus.evaluation.charts import ChartOutcome
from ptc_plus.evaluation.loading import SuiteBroken, load_suite
from ptc_plus.evaluation.matrix import measured_at
from ptc_plus.evaluation.results import NOT_RUNNABLE, Results, RunRecord
from ptc_plus.evaluation.task import OWN_CATALOG
from tests.ptc_plus.evaluation.test_report import run, scripted

SKIPPED = ChartOutcome(skipped="Charts were skipped: matplotlib is not installed.")


class Axes:
    """Records what a chart plots."""

    def __init__(self) -> None:
        self.bars: list[tuple[list[float], list[float], str]] = []
        self.lines: list[tuple[list[float], str]] = []
        self.texts: list[str] = []
        self.ticks: list[str] = []

    def bar(self, positions: Any, heights: Any, width: float, label: str = "") -> None:
        self.bars.append((list(positions), list(heights), label))

    def plot(self, xs: Any, ys: Any, marker: str = "", label: str = "") -> None:
        self.lines.append((list(ys), label))

    def text(self, x: float, y: float, text: str, **_: Any) -> None:
        self.texts.append(text)

    def set_xticklabels(self, labels: Any, **_: Any) -> None:
        self.ticks = list(labels)

    def __getattr__(self, name: str) -> Any:
        return lambda *args, **kwargs: None


class Pyplot:
    def __init__(self) -> None:
        self.axes: list[Axes] = []

    def subplots(self, figsize: Any = None) -> tuple[Any, Axes]:
        self.axes.append(Axes())
        return _Figure(), self.axes[-1]

    def close(self, figure: Any) -> None:
        pass


class _Figure:
    def tight_layout(self) -> None:
        pass

    def savefig(self, path: Path, **_: Any) -> None:
        Path(path).write_bytes(b"\x89PNG")


def blocked_ptc() -> Results:
    """ptc not runnable at 2,000 tools (its record counts nothing), a failed run with unknown counts at 20."""
    runs = [run(t, s, 10, 20, 5, 2) for t in ("a", "b") for s in ("native", "ptc", "ptc-plus-cold")]
    runs = [attrs.evolve(r, catalog=c) for r in runs for c in (20, 2000)]
    runs = [
        attrs.evolve(r, state=NOT_RUNNABLE, passed=False, requests=0, total=0, input_cached=0, input_uncached=0)
        if (r.style, r.catalog) == ("ptc", 2000)
        else r
        for r in runs
    ]
    failed = RunRecord(
        task="b", category="one-call", style="ptc-plus-cold", catalog=20, requests=0, input_cached=None,
        input_uncached=None, output=None, total=None, first_request_input=None, passed=False, reason="broke",
    )  # fmt: skip
    runs = [failed if (r.task, r.style, r.catalog) == ("b", "ptc-plus-cold", 20) else r for r in runs]
    return attrs.evolve(scripted(), runs=tuple(runs), catalogs=(20, 2000), styles=("native", "ptc", "ptc-plus-cold"))


def test_a_style_not_runnable_at_a_size_is_marked_so_never_drawn_and_unknown_cells_are_gaps(tmp_path: Path) -> None:
    plt = Pyplot()
    measured = blocked_ptc()
    styles = ["native", "ptc", "ptc-plus-cold"]
    charts._totals(plt, measured, styles, [20, 2000], tmp_path / "t.png")
    totals = plt.axes[-1]
    heights = {label: h for _, h, label in totals.bars}
    assert heights["native"] == [70.0, 70.0]
    # ptc: 70 at 20 tools; at 2,000 no bar at all (NaN), never the zero its record holds; and the label says so.
    assert heights["ptc"][0] == 70.0 and math.isnan(heights["ptc"][1])
    assert totals.texts == ["not runnable"]
    assert math.isnan(heights["ptc-plus-cold"][0])  # one unknown task makes the sum unknown: a gap

    charts._first_request(plt, measured, styles, [20, 2000], tmp_path / "f.png")
    points = dict((label, ys) for ys, label in plt.axes[-1].lines)
    assert points["ptc"][0] == 20.0 and math.isnan(points["ptc"][1])

    charts._requests(plt, measured, styles, [20, 2000], tmp_path / "r.png")
    requests = {label: (xs, h) for xs, h, label in plt.axes[-1].bars}
    # At 2,000 tools ptc ran nothing: named in the legend as not runnable, with no bar of zero requests.
    assert requests["ptc (not runnable: 2 of 2 tasks)"] == ([], [])
    assert requests["native"][1] == [2.0, 2.0]

    plt = Pyplot()
    charts._requests(plt, measured, styles, [20], tmp_path / "r20.png")
    # At 20 tools the failed run (nothing metered) is a gap: only task a's bar is drawn.
    cold = next((xs, h) for xs, h, label in plt.axes[-1].bars if label == "ptc-plus-cold")
    assert cold[1] == [2.0] and len(cold[0]) == 1


def test_catalog_sizes_are_labelled_with_the_own_catalog_in_its_place(tmp_path: Path) -> None:
    plt = Pyplot()
    measured = attrs.evolve(scripted(), runs=tuple(attrs.evolve(r, catalog=OWN_CATALOG) for r in scripted().runs))
    charts._totals(plt, measured, ["native", "ptc"], [OWN_CATALOG, 200], tmp_path / "t.png")
    assert plt.axes[-1].ticks == ["own catalog", "200 tools"]


def section(title: str, results: Results, file: str = "results.json") -> suite_report.Section:
    return suite_report.Section(title=title, results_file=file, results=results, charts=SKIPPED)


def test_the_report_has_a_section_per_suite_with_its_own_tables_one_heading_level_down() -> None:
    ours = scripted()
    theirs = attrs.evolve(
        scripted(),
        suite_version="bfcl-x",
        source="BFCL from a wheel",
        catalogs=(OWN_CATALOG,),
        runs=tuple(attrs.evolve(r, catalog=OWN_CATALOG, task=f"bfcl-{r.task}") for r in scripted().runs),
        tasks=("bfcl-a", "bfcl-b"),
    )
    text = suite_report.render([section("Ours", ours), section("BFCL", theirs, "results-bfcl.json")])
    lines = text.splitlines()
    assert lines.count("## Method") == 1 and lines.index("## Method") < lines.index("## Ours") < lines.index("## BFCL")
    assert "- [Ours](#ours): `results.json`, 2 tasks" in text
    ours_part, bfcl_part = text.split("## Ours")[1].split("## BFCL\n")
    assert "### Headline ratios" in ours_part and "#### Cost-weighted" in ours_part
    assert "| 20 | ptc-plus-cold / ptc |" in ours_part and "| own |" not in ours_part
    assert "task suite version 7" in ours_part and "Tasks:" not in ours_part
    assert "task suite version bfcl-x" in bfcl_part and "Tasks: BFCL from a wheel." in bfcl_part
    assert "### Each task's own catalog" in bfcl_part and "| own | ptc-plus-cold / ptc |" in bfcl_part
    assert "- bfcl-b, ptc-plus-mature, own catalog: the number 42 is missing" in bfcl_part
    assert "- b, ptc-plus-mature, catalog 20: the number 42 is missing" in ours_part
    # The same settings: the method is written once. Another host prompt: that suite states its own.
    other = suite_report.render([section("Ours", ours), section("BFCL", attrs.evolve(theirs, host_prompt="15k"))])
    assert other.splitlines().count("## Method") == 1 and other.splitlines().count("### Method") == 1


def test_measured_at_honours_source_date_epoch() -> None:
    assert measured_at({"SOURCE_DATE_EPOCH": "1796083200"}) == "2026-12-01T00:00:00+00:00"
    assert measured_at({"SOURCE_DATE_EPOCH": "soon"}) != "2026-12-01T00:00:00+00:00"


def test_a_suite_package_may_make_its_suite_when_loaded(tmp_path: Path) -> None:
    made = tmp_path / "made"
    made.mkdir()
    (made / "__init__.py").write_text(
        textwrap.dedent(
            """
            from ptc_plus.evaluation.task import Suite

            def load():
                return Suite(version="made-1", tasks=(), warmup=(), world=dict, tools=dict, filler=list)
            """
        ),
        encoding="utf-8",
    )
    assert load_suite(made).version == "made-1"
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "__init__.py").write_text("def load():\n    raise KeyError('no data')\n", encoding="utf-8")
    with pytest.raises(SuiteBroken, match="KeyError"):
        load_suite(broken)
