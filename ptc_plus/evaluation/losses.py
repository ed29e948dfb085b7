"""The losses list of the report: every task where a PTC Plus style costs more than a baseline, and why.

A total hides the tasks a style loses; the report names each of them, per
PTC Plus style, baseline and catalog size, by the bill of the results' price
sheet and in raw tokens. *Why* is read from the two runs' records: the ratio,
the requests each made (more requests: a discovery round, a probe, a turn the
program could not finish) and the part of the bill (cached input, uncached
input, output) whose difference is the largest: what a reader needs to tell a
discovery miss (uncached input) from a longer program (output) or a longer
history (cached input).
"""

from __future__ import annotations

from typing import Protocol

from ptc_plus.evaluation.prices import PriceSheet
from ptc_plus.evaluation.results import Results


class Table(Protocol):
    """What the losses read of the report's table (``report.Table``), without importing the report."""

    results: Results
    styles: tuple[str, ...]
    tasks: tuple[str, ...]

    def value(self, task: str, style: str, catalog: int, field: str) -> float | None: ...


COST = "cost"
"""The pseudo-field of a run's bill (``report.COST``)."""
PARTS = (("input_cached", "cached input"), ("input_uncached", "uncached input"), ("output", "output"))


def losses(table: Table, catalog: int, candidates: tuple[str, ...], baselines: tuple[str, ...]) -> list[str]:
    """One line per (candidate, baseline, weighting): how many tasks it loses of those compared, each named
    with its reason (:func:`why`)."""
    lines = []
    sheet = table.results.prices
    for candidate in (c for c in candidates if c in table.styles):
        for baseline in (b for b in baselines if b in table.styles):
            for field, what in ((COST, f"more by the `{sheet.name}` bill"), ("total", "more tokens")):
                compared, worse = 0, []
                for task in table.tasks:
                    a = table.value(task, candidate, catalog, field)
                    b = table.value(task, baseline, catalog, field)
                    if a is None or b is None:
                        continue
                    compared += 1
                    if a > b:
                        worse.append(f"{task} ({why(table, task, candidate, baseline, catalog, field, sheet)})")
                named = f": {'; '.join(worse)}" if worse else ""
                lines.append(
                    f"- **{candidate}** costs {what} than **{baseline}** on {len(worse)} of {compared} tasks{named}."
                )
    return lines


def why(table: Table, task: str, candidate: str, baseline: str, catalog: int, field: str, sheet: PriceSheet) -> str:
    """``1.42x; 5 vs 3 requests; most of it uncached input, +4,210 tokens``: the ratio, the requests, the part
    that grew most (priced by ``sheet`` for the bill, counted alike for raw tokens)."""
    a = table.value(task, candidate, catalog, field) or 0.0
    b = table.value(task, baseline, catalog, field) or 0.0
    ratio = f"{a / b:.2f}x" if b else "from zero"
    requests = (table.value(task, candidate, catalog, "requests"), table.value(task, baseline, catalog, "requests"))
    text = [ratio]
    if None not in requests:
        text.append(f"{round(requests[0] or 0)} vs {round(requests[1] or 0)} requests")
    weights = {"input_cached": sheet.cached, "input_uncached": sheet.uncached, "output": sheet.output}
    grown: list[tuple[float, str]] = []
    for name, words in PARTS:
        mine, theirs = table.value(task, candidate, catalog, name), table.value(task, baseline, catalog, name)
        if mine is None or theirs is None:
            continue
        weight = weights[name] if field == COST else 1.0
        grown.append(((mine - theirs) * weight, words))
    if grown:
        difference, words = max(grown, key=lambda part: part[0])  # a tie: the first part named
        if difference > 0:
            unit = "on the bill" if field == COST else "tokens"
            text.append(f"most of it {words}, +{round(difference):,} {unit}")
    return "; ".join(text)


__all__ = ["Table", "losses", "why"]
