"""A session's frozen plan and its pending diff, read from outside the session (ADR 0130).

For a reader that is not the session's host (the settings page): the environment is read from the
session's records as a resume reads it (:func:`~.environment.restore`, nothing written back), and the
diff a refresh would apply is the one the refresh transition computes (:func:`~ptc_plus.plan.plan_diff`
against the plan the facts of now give), worded by the same :func:`~.refresh.diff_summary`.
"""

from __future__ import annotations

from collections.abc import Sequence

from hookspecs import SessionRecord
from ptc_plus.plan import CapabilityPlan, plan_diff
from ptc_plus.session.environment import Restored, RestoreStatus, restore
from ptc_plus.session.refresh import diff_summary
from ptc_plus.session.report import COMMAND, REFRESH

REFRESH_COMMAND = f"/{COMMAND} {REFRESH}"
"""The slash command whose transition a page's refresh runs, as a person types it."""

__all__ = ["REFRESH_COMMAND", "RestoreStatus", "Restored", "frozen_environment", "pending_summary"]


def frozen_environment(records: Sequence[SessionRecord]) -> Restored:
    """The session's latest environment among ``records`` (oldest first), diagnosed as a resume would."""
    return restore(records)


def pending_summary(frozen: CapabilityPlan, now: CapabilityPlan, lang: str | None = None) -> str:
    """What a refresh replacing ``frozen`` by ``now`` would change, in the words of ``/capabilities``."""
    return diff_summary(plan_diff(frozen, now), lang)
