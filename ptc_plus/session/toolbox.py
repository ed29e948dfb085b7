"""The tools one controller contributes, and the code runtime behind ``run_code``.

The session's MCP servers' tools always (from its opening on: the plan is
computed over them); under code mode also ``run_code``, ``read_spill`` when the
host lends a spill store (ADR 0069), and the MCP resource readers when a
server offers resources (ADR 0072). A tool that joins under code mode is one
more entry of :meth:`Toolbox.code_mode_tools`. The toolbox owns the host's code
runtimes (one per run limits), so :meth:`Toolbox.aclose` aborts and awaits
live runs and refuses new ones; it also answers the model display boundary
(previews, ADR 0069) and what discovery answers from.
"""

from __future__ import annotations

from collections.abc import Sequence

from hookspecs import (
    AgentRef,
    HostServices,
    ResultAnnotation,
    ToolCall,
    ToolContext,
    ToolDefinition,
    ToolResult,
    ToolSpec,
)
from ptc_plus.adapters.mcp import McpSources, resource_tools
from ptc_plus.capabilities import choose_counter
from ptc_plus.config import WORKSPACE_DIR, UserBindings
from ptc_plus.discovery import CatalogSnapshot
from ptc_plus.preview import READ_TOOL_NAME, preview_result, read_spill_definition
from ptc_plus.runtime import CodeRuntime, KernelCell, RunLimits, run_code_definition
from ptc_plus.session.contract_memory import ContractDesk
from ptc_plus.session.projection import MODEL_LANG
from ptc_plus.session.repl_journal import session_cell
from ptc_plus.session.state import SessionState
from ptc_plus.session.table import SessionTable


class Toolbox:
    """What one controller's sessions are offered as tools, and the runtimes that run ``run_code``."""

    def __init__(self, services: HostServices, table: SessionTable, mcp: McpSources, contracts: ContractDesk) -> None:
        self._services = services
        self._table = table
        self._mcp = mcp
        self._contracts = contracts
        self._runtimes: dict[RunLimits, tuple[CodeRuntime, ToolDefinition]] = {}
        self._closed = False
        self._resource_tools = resource_tools(
            lambda agent: mcp.resource_servers(agent.session_id), self._resource_servers_allowed
        )

    def tools(self, agent: AgentRef) -> list[ToolDefinition]:
        """The code-mode tools (under code mode), then the session's MCP servers' tools; none once closed."""
        if self._closed:
            return []
        sources = self._mcp.tools(agent.session_id)
        state = self._table.get(agent)
        if state is None or not state.ptc:
            return sources
        return [*self.code_mode_tools(state), *sources]

    def code_mode_tools(self, state: SessionState) -> list[ToolDefinition]:
        """``run_code``, then each tool that joins it under code mode when its condition holds."""
        tools = [self._definition(state.limits)]
        if self._services.spill_store is not None:
            tools.append(read_spill_definition())
        if self._resource_servers_allowed(state.info.agent):  # off for every server: no resource selector at all
            tools.extend(self._resource_tools)
        return tools

    def tool_result(self, call: ToolCall, result: ToolResult) -> ResultAnnotation | None:
        """A top-level result of a code-mode session above the preview budget: a preview and a handle.

        Only where the model sees it (top-level calls) and only when the model can read the rest
        (the host lends a spill store and ``read_spill`` is in the caller's view and membership);
        otherwise the result is left as it is (ADR 0069).
        """
        if call.parent_call_id is not None:
            return None
        state = self._table.coded(call.caller)
        if state is None or state.membership is None:
            return None
        store = self._services.spill_store
        readable = state.membership.reaches(READ_TOOL_NAME) and any(
            spec.name == READ_TOOL_NAME for spec in self._services.tool_view(call.caller)
        )
        return preview_result(
            result,
            store=store if readable else None,
            counter=choose_counter(self._services.token_counter),
            budget=state.context.preview_tokens,
            lang=MODEL_LANG,
        )

    def discovery(self, agent: AgentRef) -> CatalogSnapshot | None:
        """What discovery answers from for ``agent``: the plan's effective set (``None``: no code mode)."""
        state = self._table.coded(agent)
        return state.membership.snapshot if state is not None and state.membership is not None else None

    async def aclose(self) -> None:
        """Refuse new runs, then abort and await live ones."""
        self._closed = True
        for runtime, _ in self._runtimes.values():
            await runtime.aclose()

    def _resource_servers_allowed(self, agent: AgentRef) -> frozenset[str]:
        """The resource servers ``agent``'s plan lets programs read (none without code mode)."""
        state = self._table.coded(agent)
        return state.membership.resources.allowed if state is not None and state.membership is not None else frozenset()

    def _definition(self, limits: RunLimits) -> ToolDefinition:
        entry = self._runtimes.get(limits)
        if entry is None:
            runtime = CodeRuntime(limits, owner_paths=(WORKSPACE_DIR,))
            entry = (
                runtime,
                run_code_definition(
                    runtime=runtime,
                    namespace_filter=self._namespace,
                    discovery=self.discovery,
                    expanded=self._contracts.expanded,
                    kernel_for=self._kernel_cell,
                ),
            )
            self._runtimes[limits] = entry
        return entry[1]

    def _kernel_cell(self, context: ToolContext) -> KernelCell | None:
        """The kernel cell a ``run_code`` call runs as (``[runtime] kernel = "session"``)."""
        state = self._table.get(context.call.caller)
        if state is None:
            return session_cell(self._services, context, UserBindings())
        return session_cell(self._services, context, state.bindings, state.turned_off)

    def _namespace(self, agent: AgentRef, view: Sequence[ToolSpec]) -> Sequence[ToolSpec]:
        state = self._table.get(agent)
        if state is None or state.membership is None:
            return list(view)
        return state.membership.program_view(view)
