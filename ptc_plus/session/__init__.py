"""What PTC Plus keeps per host session: gate decision, frozen environment, and its projections.

:class:`~ptc_plus.session.controller.PtcController` (one per host) answers the
plugin's hooks from these pieces; :mod:`ptc_plus.plugin` only routes hooks to it.
The names below are the package's face (ADR 0057); its modules are internal.
"""

from __future__ import annotations

from ptc_plus.session.controller import PtcController
from ptc_plus.session.inspection import REFRESH_COMMAND, Restored, RestoreStatus, frozen_environment, pending_summary
from ptc_plus.session.membership import effective_snapshot
from ptc_plus.session.provision import session_plan
from ptc_plus.session.repl_journal import KernelSession
from ptc_plus.session.report import command_specs, plan_lines
from ptc_plus.session.session_limits import (
    ConfiguredLimits,
    ExecutorWeakerThanConfig,
    PolicyLooserThanConfig,
    configured_limits,
    tighten_executor,
    tighten_policy,
)

__all__ = [
    "REFRESH_COMMAND",
    "ConfiguredLimits",
    "ExecutorWeakerThanConfig",
    "KernelSession",
    "PolicyLooserThanConfig",
    "PtcController",
    "RestoreStatus",
    "Restored",
    "command_specs",
    "configured_limits",
    "effective_snapshot",
    "frozen_environment",
    "pending_summary",
    "plan_lines",
    "session_plan",
    "tighten_executor",
    "tighten_policy",
]
