"""A plan entry's reason as text for the user (never for the model)."""

from __future__ import annotations

from ptc_plus.i18n import message
from ptc_plus.plan.model import PlanEntry, Reason


def reason_text(entry: PlanEntry, lang: str | None = None) -> str:
    """The localized reason, with the coverage and sample size or baseline rank that decided."""
    params: dict[str, str] = {}
    if entry.reason in {Reason.WORKSPACE_STATISTICS, Reason.USER_STATISTICS}:
        params = {"coverage": f"{entry.coverage or 0.0:.0%}", "samples": str(entry.samples or 0)}
    elif entry.reason is Reason.BASELINE:
        params = {"rank": str((entry.baseline_rank or 0) + 1)}
    return message(f"plan.reason.{entry.reason}", lang, **params)
