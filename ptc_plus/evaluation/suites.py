"""The evaluation's two task suites and where each one's results go (ADR 0106).

- ``ours``: the tasks written here (``benchmarks/tasks``), at 20, 200 and
  2,000 tools; results in ``results.json``.
- ``bfcl``: BFCL's multi-turn base category (``benchmarks/bfcl``, its data
  read from the pinned ``bfcl-eval`` wheel in the user cache), each task at its
  own catalog and with distractors up to 200 and 2,000 tools; results in
  ``results-bfcl.json``, charts prefixed ``bfcl-``.

Both are loaded by path from the checkout (:func:`~ptc_plus.evaluation.loading.load_suite`):
the installed package never imports ``benchmarks``. ``ptc-plus eval --suite``
chooses ``ours``, ``bfcl`` or ``all``; each suite keeps its own results file,
so a run of one suite leaves the other's numbers (and report section) as they
were measured.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TypeVar

import attrs

from ptc_plus.evaluation.task import OWN_CATALOG

T = TypeVar("T")


@attrs.frozen(kw_only=True)
class SuiteSource:
    """One suite of the evaluation: where it is loaded from, its default catalog sizes, its output files."""

    name: str
    directory: Path
    """Relative to the repository's root (the command runs there)."""
    catalogs: tuple[int, ...]
    results_file: str
    chart_prefix: str
    title: str
    """The heading of its section in the report."""


OURS = SuiteSource(
    name="ours",
    directory=Path("benchmarks/tasks"),
    catalogs=(20, 200, 2000),
    results_file="results.json",
    chart_prefix="",
    title="Our suite: tasks written here",
)
BFCL = SuiteSource(
    name="bfcl",
    directory=Path("benchmarks/bfcl"),
    catalogs=(OWN_CATALOG, 200, 2000),
    results_file="results-bfcl.json",
    chart_prefix="bfcl-",
    title="BFCL multi-turn base: public tasks nobody here wrote",
)
SOURCES = {source.name: source for source in (OURS, BFCL)}
"""In report order."""
ALL = "all"
SELECTIONS: dict[str, tuple[SuiteSource, ...]] = {OURS.name: (OURS,), BFCL.name: (BFCL,), ALL: (OURS, BFCL)}
DEFAULT_SELECTION = ALL
"""``ptc-plus eval`` regenerates both suites' numbers (issue 27: both suites, every style)."""
DEFAULT_BFCL_SAMPLE = 10
"""BFCL tasks the default run measures, spread evenly over the suite (:func:`spread`); ``0``: every task.

Every style at three catalog sizes costs a BFCL task several times what one of ours costs (its plans run
for several turns, and at 2,000 tools each turn's discovery searches a real catalog): all 199 take hours
on a 2-core machine; 10 (every 20th, one warm-up fold) keep ``ptc-plus eval`` near our suite's own time
again (ADR 0106 has the measurements)."""


def spread(tasks: Sequence[T], sample: int) -> tuple[T, ...]:
    """Every ``k``-th task from the first, ``k = ceil(len / sample)``: at most ``sample`` tasks over the whole
    suite, chosen by position only (never by results); ``sample`` 0 (or no fewer than the tasks): all."""
    if sample <= 0 or sample >= len(tasks):
        return tuple(tasks)
    step = -(-len(tasks) // sample)
    return tuple(tasks[::step])


__all__ = [
    "ALL",
    "BFCL",
    "DEFAULT_BFCL_SAMPLE",
    "DEFAULT_SELECTION",
    "OURS",
    "SELECTIONS",
    "SOURCES",
    "SuiteSource",
    "spread",
]
