"""The reference host's implementation of :class:`hookspecs.services.HostServices`."""

from __future__ import annotations

from collections.abc import MutableMapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from hookspecs.children import ChildAgents
from hookspecs.reference.demo_tools import DEMO_STATE_DIR, NOTE_TOOL_NAMES
from hookspecs.reference.spill import FileSpillStore
from hookspecs.serialization import detached
from hookspecs.services import SpillStore, TokenCounter
from hookspecs.types import AgentRef, SessionRecord, SkillSpec, ToolCall, ToolResult, ToolSpec

if TYPE_CHECKING:
    from hookspecs.reference.host import ReferenceHost


class ReferenceServices:
    """Services lent to plugins; every method resolves the agent's session on the host."""

    def __init__(
        self,
        host: ReferenceHost,
        *,
        user_id: str,
        token_counter: TokenCounter | None,
        spill_store: FileSpillStore | None,
    ) -> None:
        self._host = host
        self._user_id = user_id
        self._token_counter = token_counter
        self._spill_store = spill_store
        self._plugin_state: dict[str, object] = {}
        self.child_agents: ChildAgents | None = None
        """The host's child agents (contract 1.5 addition, :mod:`hookspecs.children`); set by the host."""

    @property
    def workspace(self) -> Path:
        return self._host.workspace

    @property
    def user_id(self) -> str:
        return self._user_id

    @property
    def protected_paths(self) -> Sequence[Path]:
        """The state directory (session logs, spill store): a program that could rewrite it
        could forge a session's history, including a plugin's frozen records. When the demo
        notes tools are host tools, also their ``<workspace>/.demo``: a program that could
        replace it could lead the notes store's writes elsewhere (ADR 0050)."""
        paths = [self._host.state_dir]
        if NOTE_TOOL_NAMES & set(self._host.host_tool_names()):
            paths.append(self._host.workspace / DEMO_STATE_DIR)
        return tuple(paths)

    @property
    def plugin_state(self) -> MutableMapping[str, object]:
        return self._plugin_state

    def drop_plugin_state(self) -> None:
        """After shutdown: what plugins kept for this host goes with it (contract 1.4)."""
        self._plugin_state.clear()

    @property
    def token_counter(self) -> TokenCounter | None:
        return self._token_counter

    @property
    def spill_store(self) -> SpillStore | None:
        return self._spill_store

    def tool_view(self, agent: AgentRef) -> Sequence[ToolSpec]:
        return self._host.view(agent).specs()

    def skills(self, agent: AgentRef) -> Sequence[SkillSpec]:
        return self._host.skill_specs()

    async def dispatch(self, call: ToolCall) -> ToolResult:
        return await self._host.dispatcher.dispatch_nested(call)

    def append_record(self, agent: AgentRef, record: SessionRecord) -> None:
        payload = {"kind": record.kind, "version": record.version, "payload": detached(record.payload)}
        self._host.session(agent.session_id).append("record", payload, durable=True)

    def read_records(self, agent: AgentRef, kind: str | None = None) -> Sequence[SessionRecord]:
        records = self._host.session(agent.session_id).records
        if kind is None:
            return list(records)
        if kind.endswith("/"):
            return [r for r in records if r.kind.startswith(kind)]
        return [r for r in records if r.kind == kind]
