"""Small bars for the plan: coverage and samples per capability, the budget used, and why statistics are silent.

Each bar is a ``<meter>`` whose number is also written beside it in words, so it reads without colour, in
a screen reader and in a text browser alike; a capability no statistics decided says "no sample" instead
of a bar at zero (no denominator is "no sample", never 0 %, ADR 0066). The statistics' silence is the plan's own state,
in the words ``ptc-plus capabilities plan`` prints (``plan.statistics.*``, ``ptc.report.statistics-detail``);
why one capability fell back is its reason (:func:`~ptc_plus.plan.reason_text`), in the reason column.
"""

from __future__ import annotations

from html import escape

from ptc_plus.i18n import message
from ptc_plus.plan import CapabilityPlan, PlanEntry

USABLE = "usable"
"""The plan's statistics state when they vote."""


def coverage_cell(entry: PlanEntry, lang: str) -> str:
    """The coverage that decided ``entry`` as a bar with its percentage and scope; "no sample" without one."""
    if entry.coverage is None or entry.scope is None:
        return _none(lang)
    percent = f"{entry.coverage:.0%}"
    scope = message(f"plan.scope.{entry.scope}", lang)
    text = message("cli.settings.page.coverage-value", lang, coverage=percent, scope=scope)
    return _meter(entry.coverage, 1, text)


def samples_cell(entry: PlanEntry, lang: str) -> str:
    """The families sampled for ``entry`` against its window, as a bar with both numbers written."""
    if entry.samples is None or entry.window is None or entry.scope is None:
        return _none(lang)
    text = message("cli.settings.page.samples-value", lang, samples=entry.samples, window=entry.window)
    return _meter(entry.samples, max(entry.window, 1), text)


def budget_section(plan: CapabilityPlan, unit: str, lang: str) -> str:
    """The budget used as a bar with its numbers written beside it (the summary above has the ``/capabilities``
    budget line), and any overage in words."""
    percent = f"{plan.used_tokens / plan.budget_tokens:.0%}" if plan.budget_tokens else "-"
    line = message(
        "cli.settings.page.budget-used",
        lang,
        used=plan.used_tokens,
        budget=plan.budget_tokens,
        unit=unit,
        percent=percent,
    )
    parts = [f'<div id="budget">{_meter(min(plan.used_tokens, plan.budget_tokens), max(plan.budget_tokens, 1), line)}']
    if plan.overage_tokens:
        over = message("cli.settings.page.overage", lang, overage=plan.overage_tokens, unit=unit)
        parts.append(f'<p class="over" role="note">{escape(over)}</p>')
    parts.append("</div>")
    return "".join(parts)


def statistics_note(plan: CapabilityPlan, lang: str) -> str:
    """Why usage statistics decide nothing in this plan ("" when they vote and no store is damaged)."""
    lines = []
    if plan.statistics != USABLE:
        lines.append(message(f"plan.statistics.{plan.statistics}", lang))
    if plan.statistics_detail:
        lines.append(message("ptc.report.statistics-detail", lang, detail=plan.statistics_detail))
    if not lines:
        return ""
    heading = escape(message("cli.settings.page.statistics-silent", lang))
    body = "".join(f"<p>{escape(line)}</p>" for line in lines)
    return f'<div id="statistics-note" class="note" role="note"><strong>{heading}</strong>{body}</div>'


def _meter(value: float, maximum: float, text: str) -> str:
    said = escape(text)
    return (
        f'<span class="bar"><meter min="0" max="{maximum}" value="{value}" aria-hidden="true"></meter>'
        f'<span class="bar-text">{said}</span></span>'
    )


def _none(lang: str) -> str:
    return f'<span class="unset">{escape(message("cli.settings.page.no-sample", lang))}</span>'


BAR_STYLE = """
.bar{display:inline-flex;align-items:center;gap:.4rem;white-space:nowrap}
.bar meter{width:4.5rem;height:.9rem}.bar-text{white-space:normal}
@media (min-width:701px){#plan th[scope=row] code,#plan tr>td:nth-child(2),.bar-text{white-space:nowrap;
overflow-wrap:normal}}
#budget{margin:.2rem 0 .6rem}#budget .bar meter{width:12rem}
#statistics-note{border-left:4px solid #555;padding:.2rem .6rem;margin:.4rem 0 .8rem}#statistics-note p{margin:.2rem 0}
"""
"""The bars' own rules, added after the page's: a bar and its words on one line, the words free to wrap."""
