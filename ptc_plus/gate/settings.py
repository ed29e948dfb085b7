"""The gate's settings, resolved per key: environment first, then config ``[gate]``, then defaults."""

from __future__ import annotations

import os
from collections.abc import Mapping

import attrs

from ptc_plus import gate_values as parse
from ptc_plus.config import WHOLE_FILE, LoadedConfig
from ptc_plus.gate.warnings import (
    CONFIG_BLOCKER,
    INVALID_DEBUG,
    INVALID_MODE,
    INVALID_ROLLOUT_PERCENT,
    INVALID_SEQUENTIAL,
    GateWarning,
    SettingSource,
)
from ptc_plus.gate_values import DEFAULT_SALT, DebugMode, GateMode

ENV_VARS: Mapping[str, str] = {
    "mode": "PTC_MODE",
    "user_allowlist": "PTC_USER_ALLOWLIST",
    "toolset_allowlist": "PTC_TOOLSET_ALLOWLIST",
    "toolset_blocklist": "PTC_TOOLSET_BLOCKLIST",
    "rollout_percent": "PTC_ROLLOUT_PERCENT",
    "rollout_salt": "PTC_ROLLOUT_SALT",
    "debug": "PTC_DEBUG",
    "sequential": "PTC_SEQUENTIAL",
}
"""``[gate]`` key -> the environment variable that overrides it."""


@attrs.frozen(kw_only=True)
class GateSettings:
    """Parsed gate settings. ``debug_raw`` is the effective raw debug text (``PTC_DEBUG_RUN`` derives from it)."""

    mode: GateMode = parse.DEFAULT_MODE
    mode_invalid: bool = False
    user_allowlist: frozenset[str] | None = None
    toolset_allowlist: frozenset[str] | None = None
    toolset_blocklist: frozenset[str] | None = None
    rollout_percent: int = 100
    rollout_salt: str = DEFAULT_SALT
    debug_mode: DebugMode | None = None
    debug_raw: str = ""
    sequential: bool = False
    config_blocked: bool = False
    warnings: tuple[GateWarning, ...] = ()

    @property
    def debug_run(self) -> bool:
        return parse.debug_run(self.debug_raw)


def resolve_gate_settings(env: Mapping[str, str] | None = None, loaded: LoadedConfig | None = None) -> GateSettings:
    """Resolve every key; an environment variable that is absent or blank does not override config."""
    env = os.environ if env is None else env
    raw: dict[str, str | None] = {}
    sources: dict[str, SettingSource] = {}
    for key, var in ENV_VARS.items():
        from_env = env.get(var)
        if from_env is not None and from_env.strip():
            raw[key], sources[key] = from_env, SettingSource(env_var=var)
            continue
        from_config = getattr(loaded.config.gate, key) if loaded else None
        raw[key] = from_config
        file = loaded.origins.get(f"gate.{key}") if loaded else None
        sources[key] = SettingSource(env_var=var, file=file, key=key) if file else SettingSource(env_var=var)
    warnings: list[GateWarning] = []

    def warn(code: str, key: str) -> None:
        warnings.append(GateWarning(code=code, value=raw[key] or "", source=sources[key]))

    blocked = False
    for blocker in loaded.gate_blockers if loaded else ():
        env_value = env.get(ENV_VARS.get(blocker.key, ""), "")
        if blocker.key == WHOLE_FILE or not env_value.strip():
            blocked = True
            warnings.append(GateWarning(code=CONFIG_BLOCKER, extra={"problem": blocker.issue.message()}))
    mode, mode_invalid = parse.parse_mode(raw["mode"])
    if mode_invalid:
        warn(INVALID_MODE, "mode")
    percent, percent_invalid = parse.parse_rollout_percent(raw["rollout_percent"])
    if percent_invalid:
        warn(INVALID_ROLLOUT_PERCENT, "rollout_percent")
    debug_mode, debug_invalid = parse.parse_debug(raw["debug"])
    if debug_invalid:
        warn(INVALID_DEBUG, "debug")
    sequential, sequential_invalid = parse.parse_sequential(raw["sequential"])
    if sequential_invalid:
        warn(INVALID_SEQUENTIAL, "sequential")
    return GateSettings(
        mode=mode,
        mode_invalid=mode_invalid,
        user_allowlist=parse.parse_list(raw["user_allowlist"]),
        toolset_allowlist=parse.parse_list(raw["toolset_allowlist"]),
        toolset_blocklist=parse.parse_list(raw["toolset_blocklist"]),
        rollout_percent=percent,
        rollout_salt=parse.parse_salt(raw["rollout_salt"]),
        debug_mode=debug_mode,
        debug_raw=(raw["debug"] or "").strip(),
        sequential=sequential,
        config_blocked=blocked,
        warnings=tuple(warnings),
    )


def sandbox_environment(settings: GateSettings) -> dict[str, str]:
    """Variables the runtime sets in a program's environment *after* scrubbing it.

    ``PTC_DEBUG_RUN`` is always present, ``"true"`` exactly when the trimmed
    raw debug value is non-empty (even an invalid one: it marks a debug run,
    not which filter applied).
    """
    return {"PTC_DEBUG_RUN": "true" if settings.debug_run else "false"}
