"""The deployment gate: who gets PTC at all.

Typical use::

    loaded = load_config(workspace)
    settings = resolve_gate_settings(os.environ, loaded)
    decision = evaluate_gate(settings, user_id=user, toolsets=keys, title=title)
    program_env.update(sandbox_environment(settings))  # after scrubbing
"""

from __future__ import annotations

from ptc_plus.gate.decision import GateDecision, Stage, evaluate_gate
from ptc_plus.gate.rollout import in_rollout, rollout_bucket
from ptc_plus.gate.settings import ENV_VARS, GateSettings, resolve_gate_settings, sandbox_environment
from ptc_plus.gate.warnings import GateWarning, SettingSource
from ptc_plus.gate_values import DEFAULT_SALT, DebugMode, GateMode, parse_list

__all__ = [
    "DEFAULT_SALT",
    "ENV_VARS",
    "DebugMode",
    "GateDecision",
    "GateMode",
    "GateSettings",
    "GateWarning",
    "SettingSource",
    "Stage",
    "evaluate_gate",
    "in_rollout",
    "parse_list",
    "resolve_gate_settings",
    "rollout_bucket",
    "sandbox_environment",
]
