"""The deployment gate: mode -> toolsets -> rollout -> debug title filter, short-circuit.

The debug filter runs only when every earlier stage allowed PTC, so no
title can revive a user the earlier stages refused (the Refly precedence fix).
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import Any

import attrs

from ptc_plus.gate.rollout import in_rollout
from ptc_plus.gate.settings import GateSettings
from ptc_plus.gate.warnings import GateWarning
from ptc_plus.gate_values import DebugMode, GateMode

USE_MARKER = "useptc"
SKIP_MARKER = "nonptc"


class Stage(enum.StrEnum):
    """Where evaluation stopped: the refusing stage, or ``debug`` when every stage allowed PTC."""

    MODE = "mode"
    TOOLSETS = "toolsets"
    ROLLOUT = "rollout"
    DEBUG = "debug"


@attrs.frozen(kw_only=True)
class GateDecision:
    """The gate's answer for one (user, toolsets, title).

    ``reason`` is a stable token (``mode-off``, ``toolset-blocked``,
    ``rollout-excluded``, ``title-lacks-useptc``, ...; messages under
    ``gate.reason.<token>``). ``debug_run`` is the value of ``PTC_DEBUG_RUN``.
    """

    enabled: bool
    stage: Stage
    reason: str
    debug_run: bool
    warnings: tuple[GateWarning, ...] = ()

    def to_json(self, lang: str | None = None) -> dict[str, Any]:
        """``{"enabled", "stage", "reason", "debug_run", "warnings"}``, in that order."""
        return {
            "enabled": self.enabled,
            "stage": str(self.stage),
            "reason": self.reason,
            "debug_run": self.debug_run,
            "warnings": [warning.render(lang) for warning in self.warnings],
        }


def evaluate_gate(
    settings: GateSettings,
    *,
    user_id: str | None,
    toolsets: Sequence[str] = (),
    title: str | None = None,
) -> GateDecision:
    """Decide whether PTC is enabled. A missing ``user_id`` is ``""``; a missing ``title`` is ``""``."""

    def decide(enabled: bool, stage: Stage, reason: str) -> GateDecision:
        return GateDecision(
            enabled=enabled, stage=stage, reason=reason, debug_run=settings.debug_run, warnings=settings.warnings
        )

    user = user_id or ""
    refusal = _mode_refusal(settings, user)
    if refusal:
        return decide(False, Stage.MODE, refusal)
    refusal = _toolset_refusal(settings, toolsets)
    if refusal:
        return decide(False, Stage.TOOLSETS, refusal)
    if settings.rollout_percent == 0:
        return decide(False, Stage.ROLLOUT, "rollout-zero")
    if not in_rollout(user, settings.rollout_salt, settings.rollout_percent):
        return decide(False, Stage.ROLLOUT, "rollout-excluded")
    text = (title or "").lower()
    if settings.debug_mode is DebugMode.OPT_IN:
        found = USE_MARKER in text
        return decide(found, Stage.DEBUG, "title-has-useptc" if found else "title-lacks-useptc")
    if settings.debug_mode is DebugMode.OPT_OUT:
        found = SKIP_MARKER in text
        return decide(not found, Stage.DEBUG, "title-has-nonptc" if found else "title-lacks-nonptc")
    return decide(True, Stage.DEBUG, "no-debug-filter")


def _mode_refusal(settings: GateSettings, user: str) -> str | None:
    if settings.mode is GateMode.OFF:
        return "mode-invalid" if settings.mode_invalid else "mode-off"
    if settings.config_blocked:
        return "config-invalid"
    if settings.mode is GateMode.PARTIAL:
        if not user:
            return "no-user-id"
        if user not in (settings.user_allowlist or ()):
            return "user-not-allowlisted"
    return None


def _toolset_refusal(settings: GateSettings, toolsets: Sequence[str]) -> str | None:
    for toolset in toolsets:
        if settings.toolset_blocklist and toolset in settings.toolset_blocklist:
            return "toolset-blocked"
    for toolset in toolsets:
        if settings.toolset_allowlist is not None and toolset not in settings.toolset_allowlist:
            return "toolset-not-allowlisted"
    return None
