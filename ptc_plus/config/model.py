"""The effective configuration as frozen value objects.

Every section has a default for every key, so an absent file, an absent
section and an absent key all mean "use the default". The defaults that are
numbers (budget, window, samples, threshold) are provisional: ADR 0032 says
where they come from and what must measure them.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping

import attrs

from ptc_plus.sandbox_policy import SandboxPolicy

CONFIG_VERSION = 1
"""The config format this plugin reads and writes (the top-level ``version`` key)."""


class Disclosure(enum.StrEnum):
    """How a capability's contract reaches the model (SPEC §4)."""

    FULL = "full"
    ON_DEMAND = "on-demand"
    OFF = "off"


class Presentation(enum.StrEnum):
    """How PTC is presented to a session's model (SPEC §2)."""

    PTC = "ptc"
    """The model sees ``run_code`` and the discovery bootstrap; managed tools are reached through programs."""
    BOTH = "both"
    """Code mode, and the tools the plan marks ``full`` are also offered as direct function tools."""
    NATIVE = "native"
    """No PTC at all: the host's own provision, nothing injected."""


@attrs.frozen(kw_only=True)
class GateSection:
    """``[gate]``: the §5 settings in their *raw* environment-variable shape.

    Values are kept as the strings an environment variable would hold (TOML
    arrays are joined with commas, booleans and integers become their text)
    so that the gate parses config and environment with one set of tolerant
    rules. ``None`` means "not set in any file".
    """

    mode: str | None = None
    user_allowlist: str | None = None
    toolset_allowlist: str | None = None
    toolset_blocklist: str | None = None
    rollout_percent: str | None = None
    rollout_salt: str | None = None
    debug: str | None = None
    sequential: str | None = None


@attrs.frozen(kw_only=True)
class ManagementSection:
    """``[management]``: the capability-management master switch and its budget.

    ``baseline`` is the manual list of common capabilities, most important
    first (its index is the baseline rank). ``context_tokens`` is the model's
    real context size in the same token unit, when the user states it (the
    host contract does not report one): explicit ``full`` beyond the budget is
    kept, but never beyond this (ADR 0047). ``None``: unknown, no such limit.
    """

    enabled: bool = False
    budget_tokens: int = 8000
    baseline: tuple[str, ...] = ()
    context_tokens: int | None = None


@attrs.frozen(kw_only=True)
class CapabilityChoice:
    """``[capabilities."<identity>"]``: an explicit disclosure for one capability."""

    disclosure: Disclosure


@attrs.frozen(kw_only=True)
class StatisticsSection:
    """``[statistics]``: whether and how usage statistics vote in new plans.

    A capability is backed by statistics in a scope when that scope has at
    least ``min_samples`` eligible families among the last ``window`` and its
    coverage is at least ``threshold`` (a fraction in ``[0, 1]``).
    """

    enabled: bool = True
    window: int = 20
    min_samples: int = 5
    threshold: float = 0.3


@attrs.frozen(kw_only=True)
class RuntimeSection:
    """``[runtime]``: presentation, sandbox policy and limits, each limit within :class:`RuntimeCaps`.

    ``presentation`` is not a sandbox key: ``both`` and ``native`` confine
    programs no less than ``ptc`` (direct calls go through the host's own
    guards), so a workspace file may set it either way.
    """

    presentation: Presentation = Presentation.PTC
    policy: SandboxPolicy = SandboxPolicy.WORKSPACE_WRITE
    network: bool = False
    timeout_s: float = 120.0
    max_output_bytes: int = 64 * 1024 * 1024
    memory_bytes: int = 512 * 1024 * 1024
    max_message_bytes: int = 128 * 1024 * 1024
    max_pending_calls: int = 128
    termination_grace_s: float = 3.0


@attrs.frozen(kw_only=True)
class RuntimeCaps:
    """The deployment's ceilings for ``[runtime]`` limits; a config value above its cap is refused."""

    timeout_s: float = 600.0
    max_output_bytes: int = 256 * 1024 * 1024
    memory_bytes: int = 4 * 1024 * 1024 * 1024
    max_message_bytes: int = 512 * 1024 * 1024
    max_pending_calls: int = 1024
    termination_grace_s: float = 30.0


DEFAULT_CAPS = RuntimeCaps()


@attrs.frozen(kw_only=True)
class PtcConfig:
    """The effective configuration: workspace file over user file over defaults, per key."""

    version: int = CONFIG_VERSION
    gate: GateSection = GateSection()
    management: ManagementSection = ManagementSection()
    capabilities: Mapping[str, CapabilityChoice] = attrs.field(factory=dict)
    statistics: StatisticsSection = StatisticsSection()
    runtime: RuntimeSection = RuntimeSection()

    def disclosure_of(self, identity: str) -> Disclosure | None:
        """The explicit choice for ``identity``, or ``None`` when it inherits."""
        choice = self.capabilities.get(identity)
        return choice.disclosure if choice else None


SECTIONS: tuple[str, ...] = ("gate", "management", "capabilities", "statistics", "runtime")
"""Top-level tables a config file may hold, besides the ``version`` key."""


def is_valid_identity(identity: str) -> bool:
    """What a config file may name: non-empty text without control characters (hosts name tools freely)."""
    return bool(identity.strip()) and all(ch.isprintable() for ch in identity)


_WELL_FORMED = re.compile(r"[A-Za-z][A-Za-z0-9_.-]*:[^\s\"'`\\]+")


def is_well_formed_identity(identity: str) -> bool:
    """What ``capabilities set`` accepts: ``source:member`` (ADR 0022), no spaces, quotes or backslashes.

    Stricter than :func:`is_valid_identity` on purpose: a typed identity that
    cannot be one the catalog produces is refused before it reaches the file.
    """
    return _WELL_FORMED.fullmatch(identity) is not None and is_valid_identity(identity)
