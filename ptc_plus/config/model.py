"""The effective configuration as frozen value objects.

Every section has a default for every key, so an absent file, an absent
section and an absent key all mean "use the default". The defaults that are
numbers (budget, window, samples, threshold) and the management switch come
from the token evaluation: ADR 0080 gives the measurements behind each.
"""

from __future__ import annotations

import enum
import os
import re
from collections.abc import Mapping
from typing import Any

import attrs

from ptc_plus.capabilities import KINDS, CapabilityKind
from ptc_plus.runtime import ExecutorName, KernelMode
from ptc_plus.sandbox_policy import SandboxPolicy

HELP = "help"
"""Field metadata: the one-line explanation of a key (starter file, reference, schema)."""
ENV = "env"
"""Field metadata: the environment variable that overrides a ``[gate]`` key."""
TIGHTEN_ONLY = "tighten_only"
"""Field metadata: a workspace file may only tighten this key (ADR 0045, :mod:`.tighten`)."""
EXAMPLE = "example"
"""Field metadata: a value to show, commented out, for a key that is not set by default."""
USER_ONLY = "user_only"
"""Field metadata: only the user file's value counts (``[repl] bindings``, ADR 0086)."""
LIMITS = "limits"
"""Field metadata: JSON Schema bounds of a number (``minimum``, ``exclusiveMinimum``, ``maximum``)."""


def _key(default: object, help: str, **extra: object) -> Any:
    """A config key: its default and the facts the reference and the schema are generated from."""
    return attrs.field(default=default, metadata={HELP: help, **extra})


CONFIG_VERSION = 1
"""The config format this plugin reads and writes (the top-level ``version`` key)."""


class Disclosure(enum.StrEnum):
    """How a capability's contract reaches the model."""

    FULL = "full"
    ON_DEMAND = "on-demand"
    OFF = "off"


class Presentation(enum.StrEnum):
    """How PTC is presented to a session's model."""

    PTC = "ptc"
    """The model sees ``run_code`` and the discovery bootstrap; managed tools are reached through programs."""
    BOTH = "both"
    """Code mode, and the tools the plan marks ``full`` are also offered as direct function tools."""
    NATIVE = "native"
    """No PTC at all: the host's own provision, nothing injected."""


_POSITIVE = {"exclusiveMinimum": 0}


@attrs.frozen(kw_only=True)
class GateSection:
    """``[gate]``: the gate settings in their *raw* environment-variable shape.

    Values are kept as the strings an environment variable would hold (TOML
    arrays are joined with commas, booleans and integers become their text)
    so that the gate parses config and environment with one set of tolerant
    rules. ``None`` means "not set in any file". Every key but ``sequential``
    is tighten-only: a workspace file may only narrow the gate (ADR 0086).
    """

    mode: str | None = _key(
        None,
        "on (default), off (kill switch) or partial (only allowlisted users)",
        tighten_only=True,
        env="PTC_MODE",
        example="on",
    )
    user_allowlist: str | None = _key(
        None, "users who get PTC under mode = partial", tighten_only=True, env="PTC_USER_ALLOWLIST", example=["alice"]
    )
    toolset_allowlist: str | None = _key(
        None,
        "when set, every toolset of a session must be listed",
        tighten_only=True,
        env="PTC_TOOLSET_ALLOWLIST",
        example=["host"],
    )
    toolset_blocklist: str | None = _key(
        None,
        "toolsets that turn PTC off (wins over the allowlist)",
        tighten_only=True,
        env="PTC_TOOLSET_BLOCKLIST",
        example=["mcp"],
    )
    rollout_percent: str | None = _key(
        None,
        "share of users (0-100, default 100) who get PTC, by a stable hash",
        tighten_only=True,
        env="PTC_ROLLOUT_PERCENT",
        example=100,
    )
    rollout_salt: str | None = _key(
        None,
        "salt of the rollout hash (default ptc-rollout)",
        tighten_only=True,
        env="PTC_ROLLOUT_SALT",
        example="ptc-rollout",
    )
    debug: str | None = _key(
        None,
        "title filter: opt-in (title must contain useptc) or opt-out (nonptc turns it off)",
        tighten_only=True,
        env="PTC_DEBUG",
        example="opt-in",
    )
    sequential: str | None = _key(
        None, "true: a program's nested calls run one at a time", env="PTC_SEQUENTIAL", example=False
    )


@attrs.frozen(kw_only=True)
class ManagementSection:
    """``[management]``: the capability-management master switch and its budget.

    Management is on by default (ADR 0080, from the token evaluation in
    ``docs/evaluation/``): a catalog whose undecided contracts all fit the budget
    is shown in full (reason ``fits-budget``), so it costs nothing there, and a
    larger one is planned. ``enabled = false`` gives the host's own provision.
    The numeric defaults of this section and ``[statistics]`` are each stated
    once, here (everything else, docs and schema included, is generated from
    them); ADR 0080 records what justifies them.

    ``baseline`` is the manual list of common capabilities, most important
    first (its index is the baseline rank). ``context_tokens`` is the model's
    real context size in the same token unit, when the user states it (the
    host contract does not report one): explicit ``full`` beyond the budget is
    kept, but never beyond this (ADR 0047). ``None``: unknown, no such limit.
    """

    enabled: bool = _key(True, "manage capabilities: plan which contracts the model sees in full")
    budget_tokens: int = _key(2000, "token budget for the contracts shown in full", limits={"minimum": 0})
    baseline: tuple[str, ...] = _key((), "common capabilities, most important first (source:member identities)")
    context_tokens: int | None = _key(
        None,
        "the model's real context size; explicit full choices never exceed it",
        limits={"minimum": 1},
        example=200000,
    )


@attrs.frozen(kw_only=True)
class CapabilityChoice:
    """``[capabilities."<identity>"]``: an explicit disclosure for one capability."""

    disclosure: Disclosure = attrs.field(
        metadata={HELP: "full (whole contract), on-demand (name only, looked up when used) or off"}
    )


@attrs.frozen(kw_only=True)
class StatisticsSection:
    """``[statistics]``: whether and how usage statistics vote in new plans.

    A capability is backed by statistics in a scope when that scope has at
    least ``min_samples`` eligible families among the last ``window`` and its
    coverage is at least ``threshold`` (a fraction in ``[0, 1]``).
    """

    enabled: bool = _key(True, "let usage statistics vote in new plans")
    window: int = _key(20, "how many recent families a scope's statistics look at", limits={"minimum": 1})
    min_samples: int = _key(
        5, "eligible families needed before statistics vote (at most window)", limits={"minimum": 1}
    )
    threshold: float = _key(
        0.1, "coverage (0-1) a capability needs to be backed by statistics", limits={"minimum": 0, "maximum": 1}
    )
    share_with_user: bool = _key(
        True, "also count this workspace's families in the user-global statistics (other workspaces' cold start)"
    )
    learn_output_shapes: bool = _key(
        True, "learn the shape of results of tools without an output schema and show it in their contracts"
    )


@attrs.frozen(kw_only=True)
class ContextSection:
    """``[context]``: the token budgets of what PTC Plus adds to the model's context besides the plan.

    With ``[management] budget_tokens`` (the contracts shown in full) these are
    the four budgets, all in the session's token unit. They are not
    plan decisions: a session reads them when it starts or resumes, and a
    refresh reads them again.
    """

    discovery_tokens: int = _key(
        2000, "token budget of one discovery answer and of one expansion message", limits={"minimum": 1}
    )
    recovery_tokens: int = _key(
        2000, "token budget of the contracts re-delivered after a compaction", limits={"minimum": 0}
    )
    preview_tokens: int = _key(
        2000, "tokens a result may cost the model before it is shown as a preview and a handle", limits={"minimum": 1}
    )


@attrs.frozen(kw_only=True)
class McpServer:
    """``[mcp.servers.<name>]``: one MCP server PTC Plus starts over stdio as a capability source (ADR 0071).

    Its tools become ``mcp:<name>/<tool>`` and its resources the source ``mcp-resources:<name>``.
    A server from a workspace file runs only with the user's consent (ADR 0071).
    """

    command: str = attrs.field(metadata={HELP: "the program to start (found on PATH if not a path)"})
    args: tuple[str, ...] = _key((), "its arguments")
    env: Mapping[str, str] = attrs.field(factory=dict, metadata={HELP: "extra environment variables for it"})
    cwd: str | None = _key(
        None,
        "its working directory, relative to the workspace (default: the workspace for a server of the"
        " workspace file, the user's home for a server of the user file)",
        example=".",
    )
    timeout_s: float = _key(30.0, "seconds one request to it may take (list, call, read)", limits=_POSITIVE)
    start_timeout_s: float = _key(
        60.0, "seconds its start may take (process, handshake, first tool list)", limits=_POSITIVE
    )
    enabled: bool = _key(True, "false: keep the entry but never start the server", tighten_only=True)


SERVER_NAME = re.compile(r"[A-Za-z0-9_-]+")
"""What ``[mcp.servers.<name>]`` may be called: a bare TOML key, and a safe part of ``mcp:<name>/<tool>``."""


@attrs.frozen(kw_only=True)
class McpSection:
    """``[mcp]``: the MCP servers used as capability sources, by name, and the user's consents.

    ``consent`` maps a workspace's real path to ``{server name: definition fingerprint}``: the
    workspace-file servers the user allowed there (ADR 0071). Only the user file may hold it.
    """

    servers: Mapping[str, McpServer] = attrs.field(factory=dict)
    consent: Mapping[str, Mapping[str, str]] = attrs.field(
        factory=dict,
        metadata={HELP: "fingerprint of a workspace server the user allowed in that workspace (user file only)"},
    )


@attrs.frozen(kw_only=True)
class RuntimeSection:
    """``[runtime]``: presentation, sandbox policy and limits, each limit within :class:`RuntimeCaps`.

    ``presentation`` is not a sandbox key: ``both`` and ``native`` confine
    programs no less than ``ptc`` (direct calls go through the host's own
    guards), so a workspace file may set it either way. Nor are the kernel
    keys (ADR 0082): a kernel's cells run in the same sandbox as a fresh
    process would, so ``kernel`` and ``durable_replay`` are not tighten-only.
    ``policy``, ``network``, ``executor`` (only towards a stronger boundary,
    ADR 0127) and every limit (``kernel_idle_s`` and ``max_kernels`` included:
    host resources) are: a workspace file may only lower them (ADR 0045, 0086).
    """

    presentation: Presentation = attrs.field(
        default=Presentation.PTC,
        metadata={HELP: "ptc (code mode), both (code mode and full tools offered directly) or native (no PTC)"},
    )
    policy: SandboxPolicy = attrs.field(
        default=SandboxPolicy.WORKSPACE_WRITE,
        metadata={
            HELP: "what a program may touch: read-only, workspace-write or danger-full-access",
            TIGHTEN_ONLY: True,
        },
    )
    network: bool = _key(False, "whether a program may use the network", tighten_only=True)
    executor: ExecutorName = attrs.field(
        factory=ExecutorName.default,
        metadata={
            HELP: "what confines a program: " + " or ".join(ExecutorName) + ", weakest boundary first",
            TIGHTEN_ONLY: True,
        },
    )
    timeout_s: float = _key(120.0, "seconds a run may take", limits=_POSITIVE, tighten_only=True)
    max_output_bytes: int = _key(
        64 * 1024 * 1024, "bytes of output a run may print", limits=_POSITIVE, tighten_only=True
    )
    memory_bytes: int = _key(512 * 1024 * 1024, "memory a run may use, in bytes", limits=_POSITIVE, tighten_only=True)
    max_message_bytes: int = _key(
        128 * 1024 * 1024, "largest message between program and host, in bytes", limits=_POSITIVE, tighten_only=True
    )
    max_pending_calls: int = _key(
        128, "nested calls a program may have in flight at once", limits=_POSITIVE, tighten_only=True
    )
    termination_grace_s: float = _key(
        3.0, "seconds a stopped run gets to exit before it is killed", limits=_POSITIVE, tighten_only=True
    )
    kernel: KernelMode = attrs.field(
        default=KernelMode.PROCESS,
        metadata={HELP: "process (a fresh process per run) or session (one stateful REPL kernel per session)"},
    )
    durable_replay: bool = _key(
        True, "rebuild a session kernel by replaying its journal; false: empty start, every cell volatile"
    )
    kernel_idle_s: float = _key(
        600.0, "seconds an idle session kernel lives before it is stopped", limits=_POSITIVE, tighten_only=True
    )
    max_kernels: int = _key(
        8,
        "session kernels alive at once; the least recently used beyond that stops",
        limits=_POSITIVE,
        tighten_only=True,
    )


@attrs.frozen(kw_only=True)
class ReplSection:
    """``[repl]``: the stateful REPL's user bindings (ADR 0082, 0086).

    ``bindings`` lists Python files loaded into every kernel cell as modules
    named by their file stem. Only the user file's list loads: a binding runs in
    every cell with the model's reach (it can call tools and wrap their
    results), so a workspace file's entries are a repository's code and are
    refused, each with an issue saying to list the file in the user file. A
    relative path is relative to the user file's directory.
    """

    bindings: tuple[str, ...] = _key(
        (),
        "Python files loaded into every REPL kernel cell, by path (a workspace file's are refused)",
        user_only=True,
    )


def auto_concurrency() -> int:
    """``[workflow] max_concurrent_agents = 0``: ``min(16, max(1, cores - 2))`` children at once (ADR 0116)."""
    return min(16, max(1, (os.cpu_count() or 1) - 2))


@attrs.frozen(kw_only=True)
class WorkflowSection:
    """``[workflow]``: caps of workflow scripts and Ralph (ADR 0116, 0117).

    Every key is tighten-only (a workspace file may only lower it) and none may
    exceed its ceiling in :data:`WORKFLOW_CEILINGS`: the defaults are the most a
    deployment allows. ``max_concurrent_agents = 0`` means ``min(16, max(1, cores - 2))``.
    """

    max_concurrent_agents: int = _key(
        0, "children running at once; 0: min(16, max(1, cores - 2))", limits={"minimum": 0}, tighten_only=True
    )
    max_total_agents: int = _key(1000, "children one workflow run may start", limits=_POSITIVE, tighten_only=True)
    max_items_per_call: int = _key(
        4096, "items one parallel() or pipeline() call may take", limits=_POSITIVE, tighten_only=True
    )
    timeout_s: float = _key(3600.0, "seconds a whole workflow run may take", limits=_POSITIVE, tighten_only=True)
    max_rounds: int = _key(256, "Ralph: rounds of fresh children at most", limits=_POSITIVE, tighten_only=True)
    ralph_max_tokens: int = _key(
        0,
        "Ralph: tokens its children may spend in all (as their model route reports them); 0: no cap",
        limits={"minimum": 0},
        tighten_only=True,
    )
    ralph_max_cost: float = _key(
        0.0,
        "Ralph: what its children may cost in all, in the currency of [workflow] prices (needed); 0: no cap",
        limits={"minimum": 0},
        tighten_only=True,
    )
    prices: Mapping[str, str] = attrs.field(
        factory=dict,
        metadata={
            HELP: 'price sheet per model route ("provider:model"): "uncached=U cached=C output=O" per million tokens',
            USER_ONLY: True,
        },
    )


WORKFLOW_CEILINGS = WorkflowSection(max_concurrent_agents=16)
"""The most any file may set for each ``[workflow]`` key (the spec's caps); the Ralph caps have none."""
UNCAPPED_WORKFLOW_KEYS = frozenset({"ralph_max_tokens", "ralph_max_cost"})
"""``[workflow]`` keys where 0 means "no cap" and any positive value is allowed."""
WORKFLOW_NOT_CAPS = frozenset({"prices"})
"""``[workflow]`` keys that are no number (the price sheet, ADR 0125)."""


@attrs.frozen(kw_only=True)
class RuntimeCaps:
    """The deployment's ceilings for ``[runtime]`` limits; a config value above its cap is refused."""

    timeout_s: float = 600.0
    max_output_bytes: int = 256 * 1024 * 1024
    memory_bytes: int = 4 * 1024 * 1024 * 1024
    max_message_bytes: int = 512 * 1024 * 1024
    max_pending_calls: int = 1024
    termination_grace_s: float = 30.0
    kernel_idle_s: float = 86400.0
    max_kernels: int = 64


DEFAULT_CAPS = RuntimeCaps()


@attrs.frozen(kw_only=True)
class PtcConfig:
    """The effective configuration: workspace file over user file over defaults, per key."""

    version: int = _key(CONFIG_VERSION, "the config format version; this plugin reads 1")
    gate: GateSection = GateSection()
    management: ManagementSection = ManagementSection()
    capabilities: Mapping[str, CapabilityChoice] = attrs.field(factory=dict)
    statistics: StatisticsSection = StatisticsSection()
    context: ContextSection = ContextSection()
    runtime: RuntimeSection = RuntimeSection()
    mcp: McpSection = McpSection()
    repl: ReplSection = ReplSection()
    workflow: WorkflowSection = WorkflowSection()

    def disclosure_of(self, identity: str) -> Disclosure | None:
        """The explicit choice for ``identity``, or ``None`` when it inherits (see :meth:`explicit_choice`)."""
        found = self.explicit_choice(identity)
        return found[0] if found is not None else None

    def explicit_choice(self, identity: str) -> tuple[Disclosure, str] | None:
        """The explicit choice for ``identity`` and the identity whose entry made it; ``None``: it inherits.

        Two levels for a member of an MCP server (``mcp:<server>/<tool>``, ``mcp-resources:<server>``;
        ADR 0071): the server unit ``mcp:<server>`` set ``off`` closes every member, whatever its own
        entry says (that entry is kept and applies again once the unit is not ``off``); otherwise the
        member's own entry; otherwise the unit's ``full``/``on-demand`` as the members' default.
        """
        unit = server_unit(identity)
        unit_choice = self.capabilities.get(unit) if unit is not None else None
        if unit is not None and unit_choice is not None and unit_choice.disclosure is Disclosure.OFF:
            return Disclosure.OFF, unit
        own = self.capabilities.get(identity)
        if own is not None:
            return own.disclosure, identity
        if unit is not None and unit_choice is not None:
            return unit_choice.disclosure, unit
        return None


SECTIONS: tuple[str, ...] = (
    "gate",
    "management",
    "capabilities",
    "statistics",
    "context",
    "runtime",
    "mcp",
    "repl",
    "workflow",
)
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


MCP_SOURCE = KINDS[CapabilityKind.MCP_TOOL].source
"""The source of an MCP tool's identity, ``mcp:<server>/<tool>``, and of a server unit, ``mcp:<server>``."""
MCP_RESOURCES_SOURCE = KINDS[CapabilityKind.MCP_RESOURCES].source
"""The source of an MCP server's resource source, ``mcp-resources:<server>``."""


def server_unit(identity: str) -> str | None:
    """The server unit ``mcp:<server>`` that ``identity`` belongs to; ``None`` when it is no MCP member.

    ``mcp:<server>/<tool>`` and ``mcp-resources:<server>`` belong to ``mcp:<server>`` (ADR 0071); the
    unit itself is no member of anything.
    """
    source, colon, member = identity.partition(":")
    if not colon:
        return None
    if source == MCP_SOURCE:
        server, slash, tool = member.partition("/")
        return f"{MCP_SOURCE}:{server}" if slash and tool and SERVER_NAME.fullmatch(server) else None
    if source == MCP_RESOURCES_SOURCE and SERVER_NAME.fullmatch(member):
        return f"{MCP_SOURCE}:{member}"
    return None


def unit_server(identity: str) -> str | None:
    """The server an ``mcp:<server>`` unit identity names; ``None`` when ``identity`` is no server unit."""
    source, colon, member = identity.partition(":")
    return member if colon and source == MCP_SOURCE and SERVER_NAME.fullmatch(member) else None
