"""The evaluation's charts (PNG), drawn with matplotlib when the optional ``eval`` extra is installed.

Three charts, each from the results object only: total tokens per style per
catalog size, first-request prompt size against catalog size, and requests per
task per style (at the largest catalog size). Without matplotlib nothing is
drawn and :class:`ChartOutcome` says so, with how to get them. An unknown count
(real-model mode, a provider that did not say) is left out, never drawn as
zero; a style with no known value has no series, and a chart with no known
value at all is not drawn (:attr:`ChartOutcome.unknown` names it). A style that
is not runnable at a catalog size (its request exceeds the model's context:
``RunRecord.state``) has no bar or point there, and the bar charts say *not
runnable* where it would stand: a style that cannot run is never drawn as a
cheap one. Catalog sizes are evenly spaced categories (20, 200, 2,000 are
already a log scale), so a suite's *own catalog* has its place among them.
"""

from __future__ import annotations

import importlib
import importlib.util
import math
import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs

from ptc_plus.evaluation.results import NOT_RUNNABLE, Results, RunRecord
from ptc_plus.evaluation.task import Style, catalog_label

INSTALL_HINT = "pip install -e '.[eval]'"
TOTALS_PNG = "total-tokens.png"
PROMPT_PNG = "first-request.png"
REQUESTS_PNG = "requests-per-task.png"


@attrs.frozen(kw_only=True)
class ChartOutcome:
    """What was drawn: ``files`` as ``(file name in OUT, title)``; or why nothing was (``skipped``)."""

    files: tuple[tuple[str, str], ...] = ()
    skipped: str = ""
    unknown: tuple[str, ...] = ()
    """Titles of the charts not drawn because every value they would show is unknown."""


def available() -> bool:
    """Whether matplotlib can be imported."""
    return importlib.util.find_spec("matplotlib") is not None


def draw(results: Results, out: Path, prefix: str = "") -> ChartOutcome:
    """Write the charts into ``out`` (file names begin with ``prefix``: one suite's charts beside another's);
    without matplotlib, write nothing and say how to get them."""
    if not available():
        return ChartOutcome(
            skipped=f"Charts were skipped: matplotlib is not installed. Install it with `{INSTALL_HINT}` "
            "and run the command again."
        )
    # Imported by name: the optional extra ships no type stubs for mypy to find when it is absent.
    matplotlib: Any = importlib.import_module("matplotlib")
    matplotlib.use("Agg")  # files only: no display, the same output on every machine
    plt: Any = importlib.import_module("matplotlib.pyplot")

    out.mkdir(parents=True, exist_ok=True)
    styles = _styles(results)
    catalogs = sorted({run.catalog for run in results.runs})
    drawn: list[tuple[str, str]] = []
    unknown: list[str] = []
    for outcome in (
        _totals(plt, results, styles, catalogs, out / f"{prefix}{TOTALS_PNG}"),
        _first_request(plt, results, styles, catalogs, out / f"{prefix}{PROMPT_PNG}"),
        _requests(plt, results, styles, catalogs, out / f"{prefix}{REQUESTS_PNG}"),
    ):
        if isinstance(outcome, str):
            unknown.append(outcome)
        else:
            drawn.append(outcome)
    return ChartOutcome(files=tuple(drawn), unknown=tuple(unknown))


def _styles(results: Results) -> list[str]:
    order = [style.value for style in Style]
    present = {run.style for run in results.runs}
    return [s for s in order if s in present] + sorted(present - set(order))


def _runs(results: Results, style: str, catalog: int) -> list[RunRecord]:
    return [r for r in results.runs if r.style == style and r.catalog == catalog]


def _blocked(results: Results, style: str, catalog: int) -> bool:
    """Whether ``style`` is not runnable at ``catalog`` (any of its runs there exceeded the model's context)."""
    return any(r.state == NOT_RUNNABLE for r in _runs(results, style, catalog))


def _values(results: Results, style: str, catalog: int, field: str) -> list[int | None]:
    """The runs' ``field``; a style not runnable here has none (what it counted before it stopped is no cost)."""
    if _blocked(results, style, catalog):
        return []
    return [getattr(r, field) for r in _runs(results, style, catalog)]


def _total(values: Sequence[int | None], repetitions: int) -> float:
    # An unknown count is drawn as a gap (NaN), never as zero.
    if not values or any(v is None for v in values):
        return float("nan")
    return sum(v for v in values if v is not None) / max(repetitions, 1)


def _requests_of(run: RunRecord) -> float:
    """A run's requests; unknown (NaN) when it was not runnable or nothing of it was metered (a failed run)."""
    if run.state == NOT_RUNNABLE or (run.requests == 0 and run.total is None):
        return float("nan")
    return float(run.requests)


def _mark_not_runnable(axes: Any, position: float, low: float) -> None:
    axes.text(position, low, "not runnable", rotation=90, ha="center", va="bottom", fontsize=7, color="0.35")


def _known(values: Sequence[float]) -> bool:
    return any(not math.isnan(v) and v > 0 for v in values)


def _totals(plt: Any, results: Results, styles: list[str], catalogs: list[int], path: Path) -> tuple[str, str] | str:
    title = "Total tokens per style per catalog size (all tasks)"
    series = {s: [_total(_values(results, s, c, "total"), results.repetitions) for c in catalogs] for s in styles}
    if not any(_known(heights) for heights in series.values()):
        path.unlink(missing_ok=True)  # a chart of an earlier run must not pass for this one's
        return title  # a log axis of nothing but unknowns cannot be drawn, and would say nothing
    figure, axes = plt.subplots(figsize=(9, 5))
    width = 0.8 / max(len(styles), 1)
    low = min(h for heights in series.values() for h in heights if not math.isnan(h) and h > 0)
    for index, style in enumerate(styles):
        heights = series[style]
        positions = [i + index * width for i in range(len(catalogs))]
        for position, catalog in zip(positions, catalogs, strict=True):
            if _blocked(results, style, catalog):
                _mark_not_runnable(axes, position, low)
        if not _known(heights):
            continue
        axes.bar(positions, heights, width, label=style)
    axes.set_xticks([i + width * (len(styles) - 1) / 2 for i in range(len(catalogs))])
    axes.set_xticklabels([catalog_label(c) for c in catalogs])
    axes.set_yscale("log")  # native at 2,000 tools is ~100x PTC Plus: a linear axis flattens the rest
    axes.set_ylabel(f"{results.unit}, log scale")
    axes.set_title(title)
    axes.legend()
    _save(plt, figure, path)
    return path.name, title


def _first_request(
    plt: Any, results: Results, styles: list[str], catalogs: list[int], path: Path
) -> tuple[str, str] | str:
    title = "First-request prompt size vs catalog size (mean over tasks)"
    series: dict[str, list[float]] = {}
    for style in styles:
        means = []
        for catalog in catalogs:
            known = _values(results, style, catalog, "first_request_input")
            means.append(
                float("nan") if not known or None in known else statistics.fmean(v for v in known if v is not None)
            )
        series[style] = means
    if not any(_known(means) for means in series.values()):
        path.unlink(missing_ok=True)
        return title
    figure, axes = plt.subplots(figsize=(9, 5))
    for style, means in series.items():
        if not _known(means):
            continue
        # A NaN (unknown, not runnable) breaks the line there: no point is drawn for it.
        axes.plot(range(len(catalogs)), means, marker="o", label=style)
    axes.set_xticks(range(len(catalogs)))
    axes.set_xticklabels([catalog_label(c) for c in catalogs])
    axes.set_yscale("log")
    axes.set_xlabel("tools in the catalog")
    axes.set_ylabel(f"{results.unit}, log scale")
    axes.set_title(title)
    axes.legend()
    _save(plt, figure, path)
    return path.name, title


def _requests(plt: Any, results: Results, styles: list[str], catalogs: list[int], path: Path) -> tuple[str, str]:
    catalog = max(catalogs) if catalogs else 0
    title = f"Requests per task ({catalog_label(catalog)})"
    tasks = list(dict.fromkeys(run.task for run in results.runs))
    figure, axes = plt.subplots(figsize=(min(max(9, len(tasks) * 0.6), 80), 5))
    width = 0.8 / max(len(styles), 1)
    for index, style in enumerate(styles):
        heights = []
        blocked = 0
        for task in tasks:
            runs = [r for r in results.runs if r.task == task and r.style == style and r.catalog == catalog]
            # One unknown repetition makes the cell unknown: a gap, never a bar of zero.
            heights.append(statistics.fmean(_requests_of(r) for r in runs) if runs else float("nan"))
            blocked += any(r.state == NOT_RUNNABLE for r in runs)
        label = style if not blocked else f"{style} (not runnable: {blocked} of {len(tasks)} tasks)"
        # An empty bar still gives the legend its entry: a style that cannot run here is named, not hidden.
        known = [(i + index * width, h) for i, h in enumerate(heights) if not math.isnan(h)]
        if known or blocked:
            axes.bar([p for p, _ in known], [h for _, h in known], width, label=label)
    axes.set_xticks([i + width * (len(styles) - 1) / 2 for i in range(len(tasks))])
    axes.set_xticklabels(tasks, rotation=60, ha="right", fontsize=8)
    axes.set_ylabel("model requests")
    axes.set_title(title)
    axes.legend()
    _save(plt, figure, path)
    return path.name, title


def _save(plt: Any, figure: Any, path: Path) -> None:
    figure.tight_layout()
    # No timestamp in the file's metadata: the same results give the same bytes.
    figure.savefig(path, dpi=100, metadata={"Software": None})
    plt.close(figure)


__all__ = ["INSTALL_HINT", "ChartOutcome", "available", "draw"]
