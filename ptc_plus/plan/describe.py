"""A plan entry's reason as text for the user (never for the model).

A reason decided by statistics names its scope, how many of the sample's
families used the capability, the coverage and the window; a capability
left to the user-global fallback or the baseline also says why the scopes
before it could not decide (no sample, fewer samples than the minimum).
When statistics had no vote at all (no store yet, a damaged store, switched
off), that is the plan's own state, said once in its summary line.
"""

from __future__ import annotations

from ptc_plus.config import Disclosure, server_unit
from ptc_plus.i18n import message
from ptc_plus.plan.model import PlanEntry, Reason, Scope, Shortfall

_SCOPE_OF = {Reason.WORKSPACE_STATISTICS: Scope.WORKSPACE, Reason.USER_STATISTICS: Scope.USER}
_STATISTICS = frozenset(_SCOPE_OF)


def reason_text(entry: PlanEntry, lang: str | None = None) -> str:
    """The localized reason, with the statistics or baseline rank that decided and the fallback cause."""
    if entry.reason is Reason.BUDGET_EXHAUSTED and (entry.scope is not None or entry.baseline_rank is not None):
        return message("plan.reason.budget-exhausted-by", lang, evidence=_evidence(entry, lang))
    if entry.reason in _STATISTICS or entry.reason in (Reason.BASELINE, Reason.NOT_BACKED):
        return _evidence(entry, lang)
    if entry.reason is Reason.SERVER_UNIT:
        return message("plan.reason.server-unit", lang, unit=server_unit(entry.identity) or "mcp:?")
    return message(f"plan.reason.{entry.reason}", lang)


def statistics_text(entry: PlanEntry, lang: str | None = None) -> str:
    """Scope, uses, samples, coverage and window of the statistics that decided ``entry`` ("" if none did)."""
    scope = entry.scope or _SCOPE_OF.get(entry.reason)
    if scope is None:
        return ""
    coverage, samples = entry.coverage or 0.0, entry.samples or 0
    return message(
        "plan.statistics-summary.one" if samples == 1 else "plan.statistics-summary.other",
        lang,
        scope=message(f"plan.scope.{scope}", lang),
        used=round(coverage * samples),
        samples=samples,
        coverage=f"{coverage:.0%}",
        window="?" if entry.window is None else entry.window,
    )


def shortfall_text(shortfall: Shortfall, lang: str | None = None) -> str:
    """Why one scope could not decide: no sample, or fewer samples than the minimum."""
    scope = message(f"plan.scope.{shortfall.scope}", lang)
    if shortfall.samples == 0:
        return message("plan.shortfall.no-sample", lang, scope=scope)
    return message(
        "plan.shortfall.below-minimum", lang, scope=scope, samples=shortfall.samples, min_samples=shortfall.min_samples
    )


def _evidence(entry: PlanEntry, lang: str | None) -> str:
    fallback = message("plan.join", lang).join(shortfall_text(s, lang) for s in entry.passed_over)
    if entry.scope is not None or entry.reason in _STATISTICS:
        text = statistics_text(entry, lang)
        if entry.reason in _STATISTICS and entry.disclosure is not Disclosure.FULL:
            # Sufficient statistics that did not back it: coverage below the threshold for full.
            text = message("plan.reason.statistics-low", lang, summary=text)
        return message("plan.reason.with-fallback", lang, reason=text, fallback=fallback) if fallback else text
    if entry.baseline_rank is not None:
        text = message("plan.reason.baseline", lang, rank=entry.baseline_rank + 1)
    else:
        text = message("plan.reason.not-backed", lang)
    if fallback:
        window = "?" if entry.window is None else entry.window
        return message("plan.reason.statistics-too-few", lang, reason=text, fallback=fallback, window=window)
    return text
