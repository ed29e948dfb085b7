"""The evaluation's README (``docs/evaluation/README.md``), rendered from a :class:`Results` object only.

Every number in the report comes from the results file, so the report can be
regenerated from ``results.json`` alone and never disagrees with it. It is a
repository document (English), not a CLI message.

What it shows: how to regenerate it, the method (the caching rule, the host
prompt, the price sheet), per catalog size the totals per style (cached /
uncached / output / total / cost / requests / passed) over all tasks and over
the subset every style completed, the headline ratios of PTC Plus (cold and
mature) against native, native + tool search and PTC in both weightings (the
bill a price sheet makes of the counted parts, and raw tokens), each as a
ratio of sums and as the geometric mean and median of the per-task ratios (so
one huge task cannot carry the headline), a per-task table and the tasks
where PTC Plus costs more than each baseline, the failures with their
reasons, and in real-model mode the spread over repetitions.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Sequence
from pathlib import Path

import attrs

from ptc_plus.evaluation.charts import ChartOutcome
from ptc_plus.evaluation.losses import losses
from ptc_plus.evaluation.prices import PriceSheet, cost
from ptc_plus.evaluation.results import MODEL, NOT_RUNNABLE, Results, RunRecord
from ptc_plus.evaluation.task import OWN_CATALOG, Style

README = "README.md"
REGENERATE = "ptc-plus eval"

STYLE_TEXT = {
    Style.NATIVE.value: "plugin off; every tool schema in every request; every call whose inputs are known goes "
    "out in one response (parallel tool calls), every result enters the history",
    Style.NATIVE_SEQUENTIAL.value: "as native, but one tool call per model step: the bound on the other side of "
    "batching",
    Style.TOOL_SEARCH.value: "plugin off; schemas deferred and loaded by a `tool_search` tool as the anchor ships "
    "it (several searches in one step, loaded definitions kept for the session where the prompt cache survives)",
    Style.TOOL_SEARCH_MATURE.value: "tool search with the five tools the warm-up families used most always loaded "
    "(the statistics PTC Plus mature plans from)",
    Style.PTC.value: "PTC Plus plugin on, management off: `run_code` with the full SDK; not runnable where its "
    "prompt exceeds the model's context",
    Style.PTC_SEARCH.value: "code mode with every contract deferred and found through `capabilities.search` "
    '(management on, budget 0, no statistics): the "code execution with MCP" pattern',
    Style.PTC_PLUS_COLD.value: "management on with the default budget, no statistics",
    Style.PTC_PLUS_MATURE.value: "management on, statistics from the fixed warm-up families (never the measured tasks)",
    Style.PTC_PLUS_BOTH.value: "PTC Plus cold with the `both` presentation: code mode, and the full tools offered "
    "directly too",
}
BASELINES = (
    Style.NATIVE.value,
    Style.NATIVE_SEQUENTIAL.value,
    Style.TOOL_SEARCH.value,
    Style.TOOL_SEARCH_MATURE.value,
    Style.PTC_SEARCH.value,
    Style.PTC.value,
)
CANDIDATES = (Style.PTC_PLUS_COLD.value, Style.PTC_PLUS_MATURE.value, Style.PTC_PLUS_BOTH.value)
NOT_RUNNABLE_TEXT = "not runnable"
"""Shown for a style whose request exceeds the model's context at a catalog size: never a number, never a failure."""
STYLE_ORDER = tuple(style.value for style in Style)
FIELDS = ("input_cached", "input_uncached", "output", "total")
COST = "cost"
"""The pseudo-field of a run's bill under the results' price sheet (in uncached-input-token units)."""


@attrs.frozen(kw_only=True)
class Cell:
    """One (task, style, catalog): the mean over repetitions (``None`` where any repetition is unknown)."""

    task: str
    category: str
    style: str
    catalog: int
    runs: tuple[RunRecord, ...]

    def mean(self, field: str) -> float | None:
        return _mean(getattr(run, field) for run in self.runs)

    def cost(self, prices: PriceSheet) -> float | None:
        """The mean bill over repetitions, priced from each run's counted parts (unknown stays unknown)."""
        bills = [
            cost(
                prices,
                cached=run.input_cached,
                uncached=run.input_uncached,
                written=run.input_written,
                output=run.output,
            )
            for run in self.runs
        ]
        if not bills or any(b is None for b in bills):
            return None
        return statistics.fmean(b for b in bills if b is not None)

    @property
    def requests(self) -> float:
        return statistics.fmean(run.requests for run in self.runs)

    @property
    def passed(self) -> bool:
        return all(run.passed for run in self.runs)

    @property
    def not_runnable(self) -> bool:
        """Every repetition was not runnable (its request exceeds the model's context): no cost, no verdict."""
        return all(run.state == NOT_RUNNABLE for run in self.runs)


class Table:
    """The results indexed by (task, style, catalog)."""

    def __init__(self, results: Results) -> None:
        self.results = results
        grouped: dict[tuple[str, str, int], list[RunRecord]] = {}
        for run in results.runs:
            grouped.setdefault((run.task, run.style, run.catalog), []).append(run)
        self.cells = {
            key: Cell(task=key[0], category=runs[0].category, style=key[1], catalog=key[2], runs=tuple(runs))
            for key, runs in grouped.items()
        }
        self.styles = _ordered({run.style for run in results.runs} | set(results.styles))
        self.catalogs = tuple(sorted({run.catalog for run in results.runs} | set(results.catalogs)))
        seen = dict.fromkeys([*results.tasks, *(run.task for run in results.runs)])
        self.tasks = tuple(seen)

    def cell(self, task: str, style: str, catalog: int) -> Cell | None:
        return self.cells.get((task, style, catalog))

    def completed(self, catalog: int) -> tuple[str, ...]:
        """The tasks every style passed (every repetition) at this catalog size, a style that is not runnable
        there aside (it has no run to fail)."""
        done = []
        for task in self.tasks:
            cells = [self.cell(task, style, catalog) for style in self.styles]
            if all(cell is not None and (cell.passed or cell.not_runnable) for cell in cells):
                done.append(task)
        return tuple(done)

    def runnable(self, style: str, catalog: int, tasks: Iterable[str]) -> bool:
        """Whether ``style`` could run every one of ``tasks`` at this catalog size."""
        cells = [self.cell(task, style, catalog) for task in tasks]
        return not any(cell is not None and cell.not_runnable for cell in cells)

    def value(self, task: str, style: str, catalog: int, field: str) -> float | None:
        """One cell's mean of ``field`` (a record field, ``requests`` or :data:`COST`); ``None``: unknown."""
        cell = self.cell(task, style, catalog)
        if cell is None or cell.not_runnable:
            return None
        if field == "requests":
            return cell.requests
        if field == COST:
            return cell.cost(self.results.prices)
        return cell.mean(field)

    def sum(self, style: str, catalog: int, tasks: Iterable[str], field: str) -> float | None:
        """The sum over ``tasks`` of the cells' means; unknown when a cell is missing or unknown."""
        values = [self.value(task, style, catalog, field) for task in tasks]
        return None if any(v is None for v in values) else sum(v for v in values if v is not None)

    def task_ratios(self, candidate: str, baseline: str, catalog: int, field: str) -> list[float]:
        """Per task, candidate / baseline, over the tasks where both are known and positive."""
        ratios = []
        for task in self.tasks:
            a, b = self.value(task, candidate, catalog, field), self.value(task, baseline, catalog, field)
            if a is not None and b is not None and a > 0 and b > 0:
                ratios.append(a / b)
        return ratios


def render(results: Results, charts: ChartOutcome) -> str:
    """The README's text."""
    out = [*_header(results), *method(results), *body(Table(results), charts)]
    return "\n".join(out).rstrip() + "\n"


def body(table: Table, charts: ChartOutcome) -> list[str]:
    """Everything after the method: the headline ratios, each catalog size's tables and losses, the spread
    over repetitions, what was not runnable, the failures and the charts (``##`` headings)."""
    out = _headline(table)
    for catalog in table.catalogs:
        out += _catalog_section(table, catalog)
    return [*out, *_spread(table), *_failures(table.results), *_charts(charts)]


def measurement(results: Results) -> str:
    """When, where and how the results were measured, and from which suite version (one line)."""
    mode = (
        f"real model `{results.model}`, {results.repetitions} repetition(s), the provider's usage numbers"
        if results.mode == MODEL
        else "scripted transcripts run for real on the reference host"
    )
    return (
        f"Measured {results.measured_at} with Python {results.python} on {results.platform}; "
        f"task suite version {results.suite_version}; mode: {mode}; unit: **{results.unit}**"
        + (f"; discovery ranker: {results.discovery}." if results.discovery else ".")
    )


def write_report(results: Results, out: Path, charts: ChartOutcome) -> Path:
    """Write ``out/README.md`` (atomically) and return its path."""
    path = out / README
    out.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(render(results, charts), encoding="utf-8")
    tmp.replace(path)
    return path


def _header(results: Results) -> list[str]:
    return [
        "# The token bill: native calling, tool search, PTC and PTC Plus",
        "",
        measurement(results),
        "",
        *([f"Tasks: {results.source}.", ""] if results.source else []),
        "## How to regenerate",
        "",
        "From a clean checkout, with the `eval` extra (`pip install -e '.[eval]'`: matplotlib, the MCP time "
        "server and the discovery ranker's semantic layer), in the repository's root (the tasks are read from "
        "`benchmarks/tasks`):",
        "",
        "```",
        results.command or REGENERATE,
        "```",
        "",
        "It rewrites `results.json` (every number below), this README and the charts.",
        "",
    ]


def method(results: Results) -> list[str]:
    """The method section: the styles, the metering and caching rule, the host prompt, the price sheet."""
    lines = ["## Method", "", "Styles (each task runs in each, on the reference host, real tools and programs):", ""]
    for style in _ordered(results.styles):
        lines.append(f"- **{style}**: {STYLE_TEXT.get(style, 'not a standard style')}")
    lines += [""]
    if results.mode == MODEL:
        lines += [
            "Metering: every model request's usage as the provider reported it (prompt tokens, cached prompt "
            "tokens, completion tokens). What the provider did not report is shown as *unknown*, and any sum "
            "containing an unknown is unknown: never filled in as zero.",
        ]
    else:
        lines += [
            "Metering: every model request exactly as the host sends it, split into parts in the order a "
            "provider receives them: "
            + ("the host system prompt (below), " if results.host_prompt_tokens else "")
            + "the system text, each tool schema (name, description, input schema as canonical JSON), each chat "
            "message (canonical JSON). Input tokens are "
            f"the sum of the parts' counts in {results.unit}. Output tokens are the answer's text plus each tool "
            "call as canonical JSON.",
            "",
            *_cache_rule(results),
        ]
    for paragraph in (_host_prompt(results), _prices(results)):
        lines += ["", *paragraph] if paragraph else []
    lines += [
        "",
        "Totals are per task family: the main agent, its child agents, discovery, retries, every request. "
        "A run passes when its oracle accepts the final answer and the end state.",
        "",
    ]
    return lines


def _cache_rule(results: Results) -> list[str]:
    if not results.min_cacheable_prefix:
        return [
            "Caching rule (a provider's prompt cache): the parts that form the longest common prefix with the "
            "previous request *of the same session* are **cached**; the rest is **uncached**. A session's first "
            "request is all uncached; a schema inserted before the history uncaches everything after it.",
        ]
    return [
        "Caching rule (a provider's prompt cache, ADR 0096): the parts that form the longest common prefix with "
        "*any earlier request of the same run* (the run's main agent, its child agents, discovery: one task in one "
        "style at one catalog size) are **cached**, provided that prefix holds at least "
        f"{results.min_cacheable_prefix:,} tokens; a shorter shared prefix is not cached at all. The rest is "
        "**uncached**. So a child agent sending the host prompt, system text and tools its parent sent gets them "
        "cached, the run's first request is all uncached, and a schema inserted before the history uncaches "
        "everything after it. Runs never share a cache (each task starts cold). A request of at least "
        f"{results.min_cacheable_prefix:,} tokens writes its uncached tokens into the cache (counted for sheets "
        "that price cache writes).",
        "",
        "The run directory (under `$TMPDIR`, named with the uid) is metered as `/eval` (the workspace as "
        "`/eval/run/workspace`, as long as a user's `/home/<name>/src/<repo>`) wherever it enters a request "
        "(system prompt, messages, tool results, answers): the counts do not depend on who runs the evaluation "
        "where.",
    ]


def _host_prompt(results: Results) -> list[str]:
    if not results.host_prompt:
        return []
    if not results.host_prompt_tokens:
        return [f"Host system prompt: none (setting `{results.host_prompt}`)."]
    return [
        f"Host system prompt (setting `{results.host_prompt}`): {results.host_prompt_tokens:,} tokens of a "
        "coding agent's own instructions (how to edit, test, use version control, report), the same text for "
        "every style, sent as the first part of every request, before the system text, as a real coding-agent "
        "host does."
        + (" It is metered as a part of its own." if results.mode != MODEL else " It is sent to the provider."),
    ]


def _prices(results: Results) -> list[str]:
    sheet = results.prices
    write = "" if sheet.cache_write is None else f", cache write {sheet.cache_write:g}x"
    return [
        f"Cost (price sheet `{sheet.name}`, version {sheet.version}: cached input {sheet.cached:g}x, uncached "
        f"input {sheet.uncached:g}x{write}, output {sheet.output:g}x, relative to one uncached input token): each "
        "run's counted cached, uncached and output tokens priced by the sheet, in uncached-input-token units. "
        "Other sheets: `ptc-plus eval --prices NAME`.",
    ]


def _headline(table: Table) -> list[str]:
    present = [b for b in BASELINES if b in table.styles]
    candidates = [c for c in CANDIDATES if c in table.styles]
    if not present or not candidates:
        return []
    sheet = table.results.prices.name
    lines = [
        "## Headline ratios",
        "",
        "PTC Plus divided by the baseline (below 1: PTC Plus costs less). *All* = the sum over every task; "
        "*completed* = over the tasks every style passed at that catalog size; *geomean* and *median* = the "
        "geometric mean and the median of the per-task ratios (every task where both are known weighs the same, "
        "so one huge task cannot carry the headline).",
        "",
        f"### Cost-weighted (price sheet `{sheet}`)",
        "",
        "| catalog | comparison | cost, all | cost, completed | cost, geomean | cost, median |",
        "|---:|---|---:|---:|---:|---:|",
    ]
    for catalog, candidate, baseline in _comparisons(table, candidates, present):
        done = table.completed(catalog)
        cells = [_sum_ratio(table, candidate, baseline, catalog, tasks, COST) for tasks in (table.tasks, done)]
        cells += _spread_ratios(table.task_ratios(candidate, baseline, catalog, COST))
        lines.append(f"| {_size(catalog)} | {candidate} / {baseline} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "### Raw tokens (cached, uncached and output counted alike)",
        "",
        "| catalog | comparison | tokens, all | tokens, completed | tokens, geomean | tokens, median "
        "| requests, all | requests, completed |",
        "|---:|---|---:|---:|---:|---:|---:|---:|",
    ]
    for catalog, candidate, baseline in _comparisons(table, candidates, present):
        done = table.completed(catalog)
        cells = [_sum_ratio(table, candidate, baseline, catalog, tasks, "total") for tasks in (table.tasks, done)]
        cells += _spread_ratios(table.task_ratios(candidate, baseline, catalog, "total"))
        cells += [_sum_ratio(table, candidate, baseline, catalog, tasks, "requests") for tasks in (table.tasks, done)]
        lines.append(f"| {_size(catalog)} | {candidate} / {baseline} | " + " | ".join(cells) + " |")
    return [*lines, ""]


def _comparisons(table: Table, candidates: Sequence[str], baselines: Sequence[str]) -> list[tuple[int, str, str]]:
    return [(c, a, b) for c in table.catalogs for a in candidates for b in baselines]


def _sum_ratio(table: Table, candidate: str, baseline: str, catalog: int, tasks: Sequence[str], field: str) -> str:
    if not tasks:
        return "—"
    if not (table.runnable(candidate, catalog, tasks) and table.runnable(baseline, catalog, tasks)):
        return NOT_RUNNABLE_TEXT
    return _ratio(table.sum(candidate, catalog, tasks, field), table.sum(baseline, catalog, tasks, field))


def _spread_ratios(ratios: Sequence[float]) -> list[str]:
    """The geometric mean and the median of per-task ratios (``unknown`` when no task has both)."""
    if not ratios:
        return ["unknown", "unknown"]
    geomean = math.exp(statistics.fmean(math.log(r) for r in ratios))
    return [f"{geomean:.2f}", f"{statistics.median(ratios):.2f}"]


def _catalog_section(table: Table, catalog: int) -> list[str]:
    done = table.completed(catalog)
    title = "Each task's own catalog" if catalog == OWN_CATALOG else f"Catalog of {catalog:,} tools"
    lines = [f"## {title}", ""]
    lines += _totals(table, catalog, table.tasks, f"All tasks ({len(table.tasks)})")
    lines += _totals(table, catalog, done, f"The subset every style completed ({len(done)} of {len(table.tasks)})")
    lines += _per_task(table, catalog)
    return lines


def _totals(table: Table, catalog: int, tasks: Sequence[str], title: str) -> list[str]:
    lines = [f"### {title}", ""]
    if not tasks:
        return [*lines, "No task.", ""]
    lines += [
        "| style | cached input | uncached input | output | total | cost | requests | passed | failed | not runnable |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for style in table.styles:
        cells = [table.cell(task, style, catalog) for task in tasks]
        passed = sum(1 for cell in cells if cell is not None and cell.passed)
        blocked = sum(1 for cell in cells if cell is not None and cell.not_runnable)
        failed = len(tasks) - passed - blocked
        if table.runnable(style, catalog, tasks):
            numbers = [_num(table.sum(style, catalog, tasks, field)) for field in (*FIELDS, COST, "requests")]
        else:
            numbers = [NOT_RUNNABLE_TEXT] * (len(FIELDS) + 2)
        lines.append(f"| {style} | " + " | ".join(numbers) + f" | {passed} | {failed} | {blocked} |")
    return [*lines, ""]


def _per_task(table: Table, catalog: int) -> list[str]:
    styles = table.styles
    ptc = Style.PTC.value
    ratios = [c for c in CANDIDATES if c in styles] if ptc in styles else []
    header = ["task", "category", *styles, *(f"{c} / ptc" for c in ratios)]
    lines = [
        "### Per task",
        "",
        "Total tokens (requests) per style; ✗ marks a run that failed its oracle; *not runnable*: the style's "
        "request exceeds the model's context at this catalog size.",
        "",
        "| " + " | ".join(header) + " |",
        "|" + "---|" * 2 + "---:|" * (len(header) - 2),
    ]
    for task in table.tasks:
        row = [task, _category(table, task, catalog)]
        for style in styles:
            cell = table.cell(task, style, catalog)
            if cell is None:
                row.append("—")
                continue
            if cell.not_runnable:
                row.append(NOT_RUNNABLE_TEXT)
                continue
            mark = "" if cell.passed else " ✗"
            row.append(f"{_num(cell.mean('total'))} ({_num(cell.requests)}){mark}")
        base = table.cell(task, ptc, catalog)
        for candidate in ratios:
            cell = table.cell(task, candidate, catalog)
            if (cell is not None and cell.not_runnable) or (base is not None and base.not_runnable):
                row.append(NOT_RUNNABLE_TEXT)
                continue
            a = None if cell is None else cell.mean("total")
            b = None if base is None else base.mean("total")
            row.append(_ratio(a, b))
        lines.append("| " + " | ".join(row) + " |")
    lines.append("")
    return [*lines, *_losses(table, catalog), ""]


def _losses(table: Table, catalog: int) -> list[str]:
    """Per PTC Plus style and baseline, the tasks where PTC Plus costs more, named with why (a total hides
    them): by the bill of the results' price sheet and in raw tokens (:mod:`.losses`)."""
    return losses(table, catalog, CANDIDATES, BASELINES)


def _spread(table: Table) -> list[str]:
    results = table.results
    if results.mode != MODEL or results.repetitions < 2:
        return []
    lines = [
        "## Spread over repetitions",
        "",
        "Per style and catalog size, the total tokens of all tasks in each repetition.",
        "",
        "| catalog | style | mean | min | max | stdev |",
        "|---:|---|---:|---:|---:|---:|",
    ]
    for catalog in table.catalogs:
        for style in table.styles:
            totals: list[int | None] = []
            for repetition in sorted({run.repetition for run in results.runs}):
                runs = [
                    r for r in results.runs if r.catalog == catalog and r.style == style and r.repetition == repetition
                ]
                totals.append(None if any(r.total is None for r in runs) else sum(r.total or 0 for r in runs))
            known = [t for t in totals if t is not None]
            if len(known) != len(totals) or not known:
                lines.append(f"| {_size(catalog)} | {style} | unknown | unknown | unknown | unknown |")
                continue
            stdev = statistics.stdev(known) if len(known) > 1 else 0.0
            lines.append(
                f"| {_size(catalog)} | {style} | {_num(statistics.fmean(known))} | {_num(min(known))} | "
                f"{_num(max(known))} | {_num(stdev)} |"
            )
    return [*lines, ""]


def _not_runnable(results: Results) -> list[str]:
    """The runs no model of the context could make, by style and catalog size: apart from the failures."""
    blocked: dict[tuple[str, int], list[RunRecord]] = {}
    for run in results.runs:
        if run.state == NOT_RUNNABLE:
            blocked.setdefault((run.style, run.catalog), []).append(run)
    if not blocked:
        return []
    blocked_styles = {style for style, _ in blocked}
    lines = [
        "## Not runnable",
        "",
        "A style whose request exceeds the model's context at a catalog size cannot run there; these runs are "
        "neither passed nor failed, and no sum or ratio includes them.",
        "",
    ]
    for (style, catalog), runs in sorted(
        blocked.items(), key=lambda item: (item[0][1], _ordered(blocked_styles).index(item[0][0]))
    ):
        tasks = ", ".join(dict.fromkeys(run.task for run in runs))
        lines.append(f"- {style}, {_where(catalog)}: {len(runs)} run(s) ({tasks}); {_one_line(runs[0].reason)}")
    return [*lines, ""]


def _failures(results: Results) -> list[str]:
    failed = [run for run in results.runs if not run.passed and run.state != NOT_RUNNABLE]
    lines = [*_not_runnable(results), "## Failures", ""]
    if not failed:
        return [*lines, "None: every run that could run passed its oracle.", ""]
    repeat = results.mode == MODEL and results.repetitions > 1
    for run in failed:
        where = f"{run.task}, {run.style}, {_where(run.catalog)}" + (f", repetition {run.repetition}" if repeat else "")
        lines.append(f"- {where}: {_one_line(run.reason) or 'failed without a reason'}")
    return [*lines, ""]


def _charts(charts: ChartOutcome) -> list[str]:
    lines = ["## Charts", ""]
    if charts.skipped:
        return [*lines, charts.skipped, ""]
    for name, title in charts.files:
        lines += [f"![{title}]({name})", ""]
    for title in charts.unknown:
        lines += [f"*{title}*: not drawn: every value it would show is unknown.", ""]
    return lines


def _category(table: Table, task: str, catalog: int) -> str:
    for style in table.styles:
        cell = table.cell(task, style, catalog)
        if cell is not None:
            return cell.category
    return ""


def _ordered(styles: Iterable[str]) -> tuple[str, ...]:
    unique = set(styles)
    return tuple(s for s in STYLE_ORDER if s in unique) + tuple(sorted(unique - set(STYLE_ORDER)))


def _mean(values: Iterable[int | None]) -> float | None:
    collected = list(values)
    if not collected or any(v is None for v in collected):
        return None
    return statistics.fmean(v for v in collected if v is not None)


def _where(catalog: int) -> str:
    return "own catalog" if catalog == OWN_CATALOG else f"catalog {catalog:,}"


def _size(catalog: int) -> str:
    return "own" if catalog == OWN_CATALOG else f"{catalog:,}"


def _num(value: float | None) -> str:
    if value is None:
        return "unknown"
    return f"{round(value):,}"


def _ratio(a: float | None, b: float | None) -> str:
    if a is None or b is None:
        return "unknown"
    if b == 0:
        return "—"
    return f"{a / b:.2f}"


def _one_line(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= 300 else flat[:299] + "…"


__all__ = ["COST", "README", "REGENERATE", "Cell", "Table", "body", "measurement", "method", "render", "write_report"]
