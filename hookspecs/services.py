"""Host services a plugin may use, as typed protocols.

A host passes one :class:`HostServices` object to the lifecycle hooks and to
every tool handler (through :class:`ToolContext`). Optional services are
``None`` when the host does not have them; a plugin must degrade, not fail.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

import attrs

from hookspecs.types import (
    AgentRef,
    Concurrency,
    JSONObject,
    JSONValue,
    SessionRecord,
    SkillSpec,
    ToolCall,
    ToolResult,
    ToolSpec,
)


@runtime_checkable
class TokenCounter(Protocol):
    """Counts tokens the way the session's model route does."""

    @property
    def unit(self) -> str:
        """Name of the unit, for example ``o200k_base tokens``."""

    def count(self, text: str) -> int:
        """Tokens in ``text``."""


PRESENTATION_TRUNCATED = "presentation_truncated"
"""Result metadata key (contract 1.3): ``True`` when the presentation a result carries is already
truncated or previewed (by the host, or by an earlier ``tool-result`` hook). Whoever sets it has said
where the rest is; plugins leave such a result's presentation alone, so no notice is wrapped twice."""

SPILL_HANDLE = "spill_handle"
"""Result metadata key (contract 1.3): the :class:`SpillStore` handle holding the full text of a
result whose presentation was replaced by a preview. A host keeps that spill readable while the
result is on the session's surface (a resumed session reads it too)."""


@runtime_checkable
class SpillStore(Protocol):
    """Keeps large text out of the model's context, readable later by handle.

    Text is stored and read back exactly: reading every part of a handle's text in
    order, by character offsets, gives the stored ``str`` again. A store may be bounded
    (total size); it may then forget handles no longer needed, and refuses text it
    cannot keep with ``OSError`` rather than keep part of it.
    """

    def put(self, text: str) -> str:
        """Store ``text``; return a handle. Raises ``OSError`` when it cannot (nothing is kept then)."""

    def read(self, handle: str, offset: int = 0, limit: int | None = None) -> str:
        """Read back stored text: at most ``limit`` characters (``None``: all) from character
        ``offset``; ``""`` at or past the end. ``KeyError`` for an unknown (or forgotten) handle;
        ``OSError`` when the store cannot read it now."""


class HostServices(Protocol):
    """What the host lends to plugins."""

    @property
    def workspace(self) -> Path:
        """Absolute, resolved workspace path."""

    @property
    def user_id(self) -> str:
        """The user the host runs for (may be empty)."""

    @property
    def protected_paths(self) -> Sequence[Path]:
        """Absolute paths that programs and other untrusted code must never write, even when
        they lie inside the workspace: the host's own state (session logs, spill files),
        its configuration. A plugin that confines programs mounts them read-only."""

    @property
    def plugin_state(self) -> MutableMapping[str, object]:
        """Plugins' own state for this host (contract 1.4): one mapping per host, empty when the host
        starts, never shared with another host in the same process, and dropped once shutdown ran.

        A plugin keeps what it owns under its own name (its entry-point or distribution name) and finds
        it here in every hook, instead of in a module-level map keyed by the host or a session
        (ADR 0089). The host never reads or changes what plugins store."""

    @property
    def token_counter(self) -> TokenCounter | None:
        """The model route's token counter, if it has one."""

    @property
    def spill_store(self) -> SpillStore | None:
        """The host's spill store, if it has one."""

    def tool_view(self, agent: AgentRef) -> Sequence[ToolSpec]:
        """The tools ``agent`` may call right now, in the host's order."""

    def skills(self, agent: AgentRef) -> Sequence[SkillSpec]:
        """The skills in ``agent``'s catalog (the body of each loads through a tool)."""

    async def dispatch(self, call: ToolCall) -> ToolResult:
        """Dispatch a nested call through the host's own guards, validation,
        ``tool-execute`` seam and scheduler. Never raises for tool failures:
        they come back as a non-ok :class:`ToolResult`.

        ``call.parent_call_id`` names the running outer call of the caller's
        session (``call.caller.session_id``; another session's call of the same
        id is another call). Nested calls of
        one outer call share their own ordered lane (submission order,
        ``parallel`` overlap up to the host's cap, ``exclusive`` barrier,
        commit order) — never the slot the outer call itself holds, so an
        ``exclusive`` outer call cannot deadlock its own nested calls. Once
        the outer call settled, queued nested calls are abandoned (status
        ``cancelled``, code ``abandoned``, ``dispatched`` false).

        Cancelling this coroutine cancels the call: a queued call never starts
        (it is abandoned), an admitted body is cancelled (``context.cancelled``
        set, its task cancelled) and awaited; cancelling it again stops the
        wait, abandoning a body that ignores its cancellation. The runtime
        cancels on a run's timeout or abort, and once more after the
        termination grace for a call still running then."""

    def append_record(self, agent: AgentRef, record: SessionRecord) -> None:
        """Persist ``record`` in the agent's session log (durable on return)."""

    def read_records(self, agent: AgentRef, kind: str | None = None) -> Sequence[SessionRecord]:
        """Records persisted in the agent's session, oldest first, optionally of one ``kind``
        (an exact kind, or a prefix ending in ``/`` to get every version)."""


@attrs.frozen(kw_only=True)
class ToolContext:
    """What a tool body receives besides its validated arguments."""

    call: ToolCall
    services: HostServices
    cancelled: asyncio.Event
    """Set when the call is cancelled; long bodies should watch it."""
    body: ToolHandler | None = attrs.field(default=None, eq=False)
    """The body of the called tool (contract 1.1): the host's innermost ``tool-execute`` step awaits
    it from here, so it never looks the body up elsewhere. ``None`` when the host runs bodies itself."""


ToolHandler = Callable[[JSONObject, ToolContext], Awaitable[JSONValue]]
"""A tool body: validated arguments in, JSON value out. Raise :class:`ToolFailure` to fail."""


@attrs.frozen(kw_only=True)
class ToolDefinition:
    """A tool a plugin (or the host) contributes: its contract and its body."""

    spec: ToolSpec
    handler: ToolHandler = attrs.field(eq=False)


def tool(
    name: str,
    *,
    description: str,
    input_schema: JSONObject | None = None,
    output_schema: JSONObject | None = None,
    concurrency: Concurrency = Concurrency.PARALLEL,
    source: str = "host",
) -> Callable[[ToolHandler], ToolDefinition]:
    """Declare a tool in a few lines (contract 1.1): decorate its body, get its :class:`ToolDefinition`.

    ::

        @tool("echo", description="Echo the text back.", input_schema={"type": "object", ...})
        async def echo(arguments: JSONObject, context: ToolContext) -> JSONValue:
            return {"echo": arguments["text"]}

    :param name: The tool's name in the agent's view.
    :param description: What the model reads about it.
    :param input_schema: JSON Schema of the arguments (default: any object); the host validates it.
    :param output_schema: JSON Schema of the value, if the tool declares one.
    :param concurrency: ``parallel`` (default) or ``exclusive``.
    :param source: Where the tool comes from (``host``, ``plugin:<name>``, ...).
    :returns: A decorator turning the body into the tool's definition.
    """
    spec = ToolSpec(
        name=name,
        description=description,
        input_schema=input_schema if input_schema is not None else {"type": "object"},
        output_schema=output_schema,
        concurrency=concurrency,
        source=source,
    )

    def declare(handler: ToolHandler) -> ToolDefinition:
        return ToolDefinition(spec=spec, handler=handler)

    return declare


class ToolFailure(Exception):
    """Raised by a tool body to report a failure with a stable code."""

    def __init__(self, code: str, message: str, data: JSONObject | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data: JSONObject = dict(data or {})
