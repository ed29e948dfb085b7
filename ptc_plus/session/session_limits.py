"""Run limits of a session from the effective ``[runtime]`` config and the gate's settings.

:func:`configured_limits` is the one path from a workspace's config files to
:class:`RunLimits`: a session opens with it (:mod:`.opening`) and so does
``ptc-plus exec`` (ADR 0064), which may then only tighten the policy with
:func:`tighten_policy`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import attrs

from ptc_plus.config import LoadedConfig, RuntimeSection, SandboxPolicy, load_config
from ptc_plus.errors import UsageError
from ptc_plus.gate import GateSettings, resolve_gate_settings
from ptc_plus.i18n import message
from ptc_plus.runtime import ExecutorName, InvalidLimits, RunLimits


class PolicyLooserThanConfig(UsageError):
    """A command-line policy looser than the one a config file sets (params ``requested``, ``configured``,
    ``file``): a flag may only tighten the configuration (ADR 0064)."""

    code = "PTC-4030"


class ExecutorWeakerThanConfig(UsageError):
    """A command-line executor with a weaker boundary than the one a config file sets (params ``requested``,
    ``configured``, ``file``): a flag may only tighten the configuration (ADR 0127)."""

    code = "PTC-4031"


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
        executor=runtime.executor,
        timeout_s=min(runtime.timeout_s, base.max_timeout_s),
        max_output_bytes=runtime.max_output_bytes,
        memory_bytes=runtime.memory_bytes,
        max_message_bytes=runtime.max_message_bytes,
        max_pending_calls=runtime.max_pending_calls,
        grace_s=runtime.termination_grace_s,
        kernel=runtime.kernel,
        durable_replay=runtime.durable_replay,
        kernel_idle_s=runtime.kernel_idle_s,
        max_kernels=runtime.max_kernels,
        sequential=gate.sequential,
        debug_run=gate.debug_run,
    )


def session_limits(runtime: RuntimeSection, gate: GateSettings, base: RunLimits | None = None) -> SessionLimits:
    """Like :func:`run_limits`, but an unusable ``[runtime]`` never blocks a session: the defaults apply, reported."""
    try:
        return SessionLimits(limits=run_limits(runtime, gate, base))
    except InvalidLimits as error:
        fallback = run_limits(RuntimeSection(), gate, base)
        return SessionLimits(limits=fallback, diagnostic=message("ptc.report.runtime-defaults", detail=error.message()))


@attrs.frozen(kw_only=True)
class ConfiguredLimits:
    """What a workspace's effective config gives its runs, with everything wrong in the config."""

    loaded: LoadedConfig
    gate: GateSettings
    session: SessionLimits

    @property
    def limits(self) -> RunLimits:
        return self.session.limits


def config_diagnostics(loaded: LoadedConfig, session: SessionLimits) -> list[str]:
    """The lines a session reports about its config: every issue, then why the configured run limits were
    not used (if they were not). ``ptc-plus exec`` reports the same two things, each issue with its code."""
    found = [message("ptc.report.config-issue", issue=issue.message()) for issue in loaded.issues]
    if session.diagnostic is not None:
        found.append(session.diagnostic)
    return found


def configured_limits(
    workspace: Path | None,
    *,
    env: Mapping[str, str] | None = None,
    loaded: LoadedConfig | None = None,
    base: RunLimits | None = None,
) -> ConfiguredLimits:
    """Run limits from the user and workspace config files (workspace keys tighten only, ADR 0045) and the
    gate's settings (``PTC_SEQUENTIAL``, ``PTC_DEBUG`` over ``[gate]``). A bad file or key never blocks:
    the valid keys apply, ``loaded.issues`` and ``session.diagnostic`` say what was refused
    (:func:`config_diagnostics` words them as a session reports them).

    ``loaded``: the config already read for ``workspace`` (read here when omitted); ``base``: the limits
    the config narrows (default :class:`RunLimits`).
    """
    env = os.environ if env is None else env
    loaded = load_config(workspace, env=env) if loaded is None else loaded
    gate = resolve_gate_settings(env, loaded)
    return ConfiguredLimits(loaded=loaded, gate=gate, session=session_limits(loaded.config.runtime, gate, base))


def tighten_policy(configured: ConfiguredLimits, requested: SandboxPolicy | None) -> RunLimits:
    """The configured limits under the policy a command line asks for.

    A config file's ``[runtime] policy`` is a ceiling: ``requested`` may equal
    it or be tighter, never looser. Where no file sets the policy, the
    command line chooses freely, as the user file could (the built-in default
    is not a ceiling, so ``--policy danger-full-access`` stays available where
    the executor is missing).

    :raises PolicyLooserThanConfig: ``requested`` is looser than a file's policy.
    """
    limits = configured.limits
    if requested is None or requested is limits.policy:
        return limits
    file = configured.loaded.origins.get("runtime.policy")
    if file is not None and _looseness(requested) > _looseness(limits.policy):
        raise PolicyLooserThanConfig(requested=str(requested), configured=str(limits.policy), file=file)
    return attrs.evolve(limits, policy=requested)


def tighten_executor(configured: ConfiguredLimits, limits: RunLimits, requested: ExecutorName | None) -> RunLimits:
    """``limits`` under the executor a command line asks for: a config file's ``[runtime] executor`` is a floor
    (ADR 0127); where no file sets it, the command line chooses freely, as the user file could.

    :raises ExecutorWeakerThanConfig: ``requested`` is a weaker boundary than a file's executor.
    """
    if requested is None or requested is limits.executor:
        return limits
    file = configured.loaded.origins.get("runtime.executor")
    if file is not None and requested.strength < limits.executor.strength:
        raise ExecutorWeakerThanConfig(requested=str(requested), configured=str(limits.executor), file=file)
    return attrs.evolve(limits, executor=requested)


def _looseness(policy: SandboxPolicy) -> int:
    return list(SandboxPolicy).index(policy)  # declared tightest first
