"""Shared value types of the host contract.

Every type here is a frozen, keyword-only attrs class: hosts and plugins pass
them across the seams and never mutate them (use :func:`attrs.evolve`).
JSON-shaped payloads are typed as :data:`JSONValue`; they must be plain
``dict``/``list``/``str``/``int``/``float``/``bool``/``None`` trees.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeAlias

import attrs

JSONValue: TypeAlias = Any
"""A JSON-compatible value (kept as ``Any``: mypy cannot express the recursion usefully)."""

JSONObject: TypeAlias = Mapping[str, Any]


class Concurrency(enum.StrEnum):
    """How a tool's body may share the scheduler with other calls."""

    PARALLEL = "parallel"
    """The body may overlap other ``parallel`` bodies (up to ``max_parallel``)."""
    EXCLUSIVE = "exclusive"
    """The body waits for the pool to drain and holds it until its result commits."""


@attrs.frozen(kw_only=True)
class ToolSpec:
    """The contract of one tool as the host offers it.

    ``source`` names where the tool comes from (``host``, ``plugin:<name>``,
    ``mcp:<server>``, ...); together with ``name`` it forms the tool's stable
    identity. ``input_schema`` is a JSON Schema object; the host validates
    arguments against it before any dispatch.
    """

    name: str
    description: str
    input_schema: JSONObject = attrs.field(factory=lambda: {"type": "object"})
    output_schema: JSONObject | None = None
    concurrency: Concurrency = Concurrency.PARALLEL
    source: str = "host"

    @property
    def identity(self) -> str:
        """Stable across contract edits, distinct across sources: ``host:read_file`` for a plain
        source, ``mcp:github/create_issue`` when the source already has a kind prefix."""
        return f"{self.source}/{self.name}" if ":" in self.source else f"{self.source}:{self.name}"


@attrs.frozen(kw_only=True)
class AgentRef:
    """Which agent of which session is acting.

    ``family_id`` is the id of the root session of the session family;
    a root session's ``family_id`` equals its ``session_id``.
    """

    session_id: str
    agent_id: str
    family_id: str
    parent_session_id: str | None = None


@attrs.frozen(kw_only=True)
class ToolCall:
    """One request to run a tool.

    ``call_id`` is unique within the session; nested calls made on behalf of
    an outer call use ids of the form ``<outer-call-id>:<scope>:<n>`` and carry
    ``parent_call_id`` (an outer call of the same caller session). Another
    session — independent, or a parent or child of this one — may use the same
    id at the same time, so hosts and plugins know a call by the caller's
    ``session_id`` and its ``call_id`` together, never by the id alone (ADR 0089).
    """

    call_id: str
    tool: str
    arguments: JSONObject
    caller: AgentRef
    parent_call_id: str | None = None


class ResultStatus(enum.StrEnum):
    """How a dispatch settled."""

    OK = "ok"
    ERROR = "error"
    """The tool ran (or was refused) and reports failure."""
    CANCELLED = "cancelled"


@attrs.frozen(kw_only=True)
class ToolError:
    """Why a call failed: a stable ``code`` and a human message."""

    code: str
    message: str
    data: JSONObject = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class ToolResult:
    """The settled, canonical outcome of a call.

    ``value`` is the canonical value; seams may attach ``metadata`` or a
    different ``presentation`` (what the model sees) but never alter ``value``.
    ``dispatched`` is ``False`` when the call was refused before the tool's
    owner ran (validation, guard, unknown tool): statistics count only
    dispatched calls as use.
    """

    call_id: str
    tool: str
    status: ResultStatus
    value: JSONValue = None
    error: ToolError | None = None
    dispatched: bool = True
    metadata: JSONObject = attrs.field(factory=dict)
    presentation: str | None = None

    @property
    def ok(self) -> bool:
        return self.status is ResultStatus.OK


@attrs.frozen(kw_only=True)
class ResultAnnotation:
    """What a ``tool-result`` hook may add: metadata and/or a presentation."""

    metadata: JSONObject = attrs.field(factory=dict)
    presentation: str | None = None


@attrs.frozen(kw_only=True)
class PromptSection:
    """A named, ordered piece of the system prompt.

    Sections are sorted by ``(order, name)``. Their text must be a pure
    function of configuration, model route and the host tool view (the
    *stable prefix* rule): no counters, timestamps, statistics or plans.
    """

    name: str
    text: str
    order: int = 500


@attrs.frozen(kw_only=True)
class PromptContext:
    """What system-prompt assembly may depend on."""

    agent: AgentRef
    model_route: str
    tools: tuple[ToolSpec, ...]
    workspace: Path


@attrs.frozen(kw_only=True)
class ContextMessage:
    """A model-visible message a plugin commits into the session history.

    It enters the history at the next accepted model step, after the
    protected system head. A later message with the same ``provenance``
    supersedes the earlier one on the model-visible surface (the raw log
    keeps both).
    """

    provenance: str
    text: str


@attrs.frozen(kw_only=True)
class SessionRecord:
    """A typed record a plugin persists in a session's log.

    ``kind`` names the format including its major version (for example
    ``ptc-capability-environment/v1``); ``payload`` is a JSON object.
    """

    kind: str
    payload: JSONObject
    version: int = 1


@attrs.frozen(kw_only=True)
class SessionInfo:
    """The facts about a session that lifecycle hooks receive."""

    agent: AgentRef
    workspace: Path
    user_id: str
    title: str = ""
    model_route: str = ""


@attrs.frozen(kw_only=True)
class StepInfo:
    """One accepted model step: ``turn`` counts user turns, ``step`` model requests within it."""

    agent: AgentRef
    turn: int
    step: int


@attrs.frozen(kw_only=True)
class TurnStart:
    """A user turn about to run (contract 1.6, ADR 0125): what the user said, and what the host grants for it.

    :ivar agent: The session the turn belongs to.
    :ivar turn: The turn's number (as :attr:`StepInfo.turn` of its steps).
    :ivar user_text: The user's message of this turn, exactly as it enters the session (for a child agent's
        turn: the prompt its parent's request gave).
    :ivar grants: Names of rights the *host* grants for this turn only, on the user's behalf (a button the
        user pressed, a flag of the front door): a plugin may offer what a name grants without reading
        :attr:`user_text`. Only the host sets these; nothing the model says can.
    """

    agent: AgentRef
    turn: int
    user_text: str
    grants: tuple[str, ...] = ()


@attrs.frozen(kw_only=True)
class TurnSummary:
    """A settled turn: how many steps and tool calls it took."""

    agent: AgentRef
    turn: int
    steps: int
    tool_calls: int
    final_text: str


@attrs.frozen(kw_only=True)
class FamilyMember:
    """One agent of a settled session family, as the host's lineage records it (contract 1.2).

    ``workspace`` is this agent's own resolved workspace (its
    :attr:`SessionInfo.workspace`), which may differ from the root's.
    ``started`` is true when the host ever did work for this agent: began a
    turn for it or dispatched a call on its behalf (in this host process or
    an earlier one). An agent created but never started did nothing that
    could be evidence of use or of availability.
    """

    agent: AgentRef
    workspace: Path
    started: bool


@attrs.frozen(kw_only=True)
class FamilySettlement:
    """A provable settlement boundary of one session family (contract 1.2, ADR 0065).

    At this boundary the root and every descendant are at rest: no agent of
    the family is live (no turn in progress, no call the host dispatches for
    it still running), so nothing more happens in the family without new
    input. ``members`` lists every agent of the family that ever existed,
    root first, then descendants depth-first in fork order, whether or not
    it started. ``generation`` is 1 at the family's first settlement and
    strictly greater at each later one of the same ``family_id`` (more
    work, also after a resume in another host process): a later generation
    revises the family, it is never another family. Gaps are allowed.
    """

    family_id: str
    root: AgentRef
    members: tuple[FamilyMember, ...]
    generation: int

    @property
    def agents(self) -> tuple[AgentRef, ...]:
        """Every agent of the family, in :attr:`members` order."""
        return tuple(m.agent for m in self.members)

    @property
    def started(self) -> bool:
        """Whether any agent of the family started; a host never settles a family that did not,
        so this is a guard for plugins, not a state they will see ``False`` in."""
        return any(m.started for m in self.members)


@attrs.frozen(kw_only=True)
class CompactionInfo:
    """A compaction that replaced the model-visible surface.

    ``kept_call_ids`` are the tool calls still visible after compaction.
    ``kept_provenances`` (since 1.3) are the provenances of the context
    messages still visible after it; ``None`` means the host does not say
    (a 1.2 host): a plugin then assumes none of its context messages survived.
    """

    agent: AgentRef
    summary: str
    kept_call_ids: tuple[str, ...] = ()
    kept_provenances: tuple[str, ...] | None = None


@attrs.frozen(kw_only=True)
class CommandSpec:
    """A slash command a plugin offers: ``/name``."""

    name: str
    summary: str


@attrs.frozen(kw_only=True)
class CommandRequest:
    """A slash command typed by a human; handled without any model request."""

    name: str
    args: tuple[str, ...]
    agent: AgentRef


class ReceiptStatus(enum.StrEnum):
    """How a slash command ended, for the person who typed it."""

    APPLIED = "applied"
    PENDING = "pending"
    """Accepted; it takes effect at a later safe boundary (for example when a running tool call ends)."""
    FAILED = "failed"
    SHOWN = "shown"
    """Read-only commands: nothing changed."""
    UNCHANGED = "unchanged"
    """A change command found nothing to change (contract 1.3): nothing was applied or announced."""


@attrs.frozen(kw_only=True)
class CommandReceipt:
    """The UI receipt of a slash command (never shown to the model)."""

    status: ReceiptStatus
    text: str
    data: JSONObject = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class Refusal:
    """A guard's refusal of a call before dispatch."""

    code: str
    reason: str


DEFAULT_SKILL_LOADER = "load_skill"
"""The loader tool a 1.0 host implied for every skill (contract 1.1 names it on :class:`SkillSpec`)."""


@attrs.frozen(kw_only=True)
class SkillSpec:
    """A skill the host offers: its catalog line; the body loads only when used.

    ``loader`` is the host's tool whose call loads the body, with the skill's
    name in the argument ``loader_argument`` (contract 1.1: a host fact, so a
    plugin that governs skills can refuse a load without guessing the tool).
    """

    name: str
    description: str
    source: str = "skill"
    loader: str = DEFAULT_SKILL_LOADER
    loader_argument: str = "name"

    @property
    def identity(self) -> str:
        return f"skill:{self.name}"
