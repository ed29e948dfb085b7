"""The evaluation's README over both suites: one section per suite, each rendered from its own results file.

Each section is what :mod:`.report` renders for one suite (its measurement
line, its source, the headline ratios in both weightings, the per-catalog
tables with the losses list, what was not runnable, the failures, its charts),
one heading level down. The method is written once; a suite measured under
other settings (another host prompt, price sheet or caching rule) states its
own method in its section. Every number comes from the results files, so the
README is regenerated from them alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import attrs

from ptc_plus.evaluation import report
from ptc_plus.evaluation.charts import ChartOutcome
from ptc_plus.evaluation.results import Results


@attrs.frozen(kw_only=True)
class Section:
    """One suite's part of the report."""

    title: str
    results_file: str
    results: Results
    charts: ChartOutcome


def render(sections: Sequence[Section]) -> str:
    """The README's text: a section per suite, in the given order."""
    if not sections:
        raise ValueError("a report needs at least one suite's results")
    method = report.method(sections[0].results)
    out = [
        "# The token bill: native calling, tool search, PTC and PTC Plus",
        "",
        "Every style runs every task of each suite at each catalog size; each suite has a section below, "
        "measured and written to its own results file:",
        "",
        *(f"- [{s.title}](#{_anchor(s.title)}): `{s.results_file}`, {_tasks(len(s.results.tasks))}" for s in sections),
        "",
        "## How to regenerate",
        "",
        "From a clean checkout, with the `eval` extra (`pip install -e '.[eval]'`: matplotlib, the MCP time "
        "server, the discovery ranker's semantic layer and `mpmath` for BFCL's math backend), in the "
        "repository's root (our tasks are read from `benchmarks/tasks`; BFCL's from `benchmarks/bfcl` and the "
        "pinned `bfcl-eval` wheel, fetched into the user cache when missing):",
        "",
        "```",
        *dict.fromkeys(s.results.command or report.REGENERATE for s in sections),
        "```",
        "",
        "It rewrites the results file of each suite it runs, this README and the charts; a suite not run keeps "
        "its results file, and its section below is rendered from it.",
        "",
        "Independent runs go side by side, one worker process per core by default (`--jobs N`, ADR 0119); the "
        "results are the same bytes for every `N`. BFCL's default is a sample (`--bfcl-sample 10`: every 20th "
        "task); `--bfcl-sample 0` measures all 199 runnable tasks, several CPU-hours (ADR 0119 has the "
        "measured times).",
        "",
        *method,
    ]
    for section in sections:
        out += [f"## {section.title}", ""]
        out += _section(section, method)
    return "\n".join(out).rstrip() + "\n"


def write(sections: Sequence[Section], out: Path) -> Path:
    """Write ``out/README.md`` (atomically) and return its path."""
    path = out / report.README
    out.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(render(sections), encoding="utf-8")
    tmp.replace(path)
    return path


def _section(section: Section, method: Sequence[str]) -> list[str]:
    results = section.results
    table = report.Table(results)
    lines = [report.measurement(results), ""]
    if results.source:
        lines += [f"Tasks: {results.source}.", ""]
    own = report.method(results)
    if own != list(method):  # measured under other settings: its own method, in its section
        lines += own
    return _demoted([*lines, *report.body(table, section.charts)])


def _demoted(lines: Sequence[str]) -> list[str]:
    """Every heading one level down (the report's own sections start at ``##``)."""
    return [f"#{line}" if line.startswith("#") else line for line in lines]


def _tasks(count: int) -> str:
    return f"{count} task" if count == 1 else f"{count} tasks"


def _anchor(title: str) -> str:
    """The anchor a Markdown renderer gives a heading (lower case, spaces as ``-``, punctuation dropped)."""
    kept = "".join(ch for ch in title.lower() if ch.isalnum() or ch in " -")
    return kept.replace(" ", "-")


__all__ = ["Section", "render", "write"]
