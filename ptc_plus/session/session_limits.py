"""Run limits of a session from the effective ``[runtime]`` config and the gate's settings."""

from __future__ import annotations

import attrs

from ptc_plus.config import RuntimeSection
from ptc_plus.gate import GateSettings
from ptc_plus.i18n import message
from ptc_plus.runtime import InvalidLimits, RunLimits


@attrs.frozen(kw_only=True)
class SessionLimits:
    """The limits a session runs with; ``diagnostic`` says why configured values were not used."""

    limits: RunLimits
    diagnostic: str | None = None


def run_limits(runtime: RuntimeSection, gate: GateSettings, base: RunLimits | None = None) -> RunLimits:
    """``base`` (default limits) narrowed by config; config values were already checked against the deployment caps.

    Raises :class:`InvalidLimits` when ``runtime`` holds a value the runtime refuses.
    """
    base = base or RunLimits()
    return attrs.evolve(
        base,
        policy=runtime.policy,
        network=runtime.network,
        timeout_s=min(runtime.timeout_s, base.max_timeout_s),
        max_output_bytes=runtime.max_output_bytes,
        memory_bytes=runtime.memory_bytes,
        max_message_bytes=runtime.max_message_bytes,
        max_pending_calls=runtime.max_pending_calls,
        grace_s=runtime.termination_grace_s,
        sequential=gate.sequential,
        debug_run=gate.debug_run,
    )


def session_limits(runtime: RuntimeSection, gate: GateSettings) -> SessionLimits:
    """Like :func:`run_limits`, but an unusable ``[runtime]`` never blocks a session: the defaults apply, reported."""
    try:
        return SessionLimits(limits=run_limits(runtime, gate))
    except InvalidLimits as error:
        fallback = run_limits(RuntimeSection(), gate)
        return SessionLimits(limits=fallback, diagnostic=message("ptc.report.runtime-defaults", detail=error.message()))
