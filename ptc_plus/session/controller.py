"""One controller per host: routes every plugin hook to the seam that owns it, one line per hook (ADR 0112).

The seams share one :class:`~.table.SessionTable` (each session's frozen
state, and the ``run_code`` cells it runs now) and nothing else of each other:

- :class:`~.opener.Opener`: start computes the plan once, resume restores it
  (re-checking the gate and the sandbox, ADR 0053); both, and an applied
  refresh, hold the state through one path that freezes its view (:mod:`.view`);
- :class:`~.deliverer.Deliverer`: the context messages owed (catalog, notice,
  contract recoveries and expansions) and the proof the host committed them;
- :class:`~.guarding.Guard`: nobody reaches what the plan keeps out;
- :class:`~.toolbox.Toolbox`: the tools contributed, the code runtimes (so
  shutdown aborts and awaits live runs and refuses new ones), result previews;
- :class:`~.usage.UsageLedger`: each family's usage and its settled samples (ADR 0067);
- :class:`~.commands.CapabilitiesCommands`: ``/capabilities`` and the refresh transition;
- :mod:`.prompt`: the prompt's answers, functions of the state and its frozen view.
"""

from __future__ import annotations

from hookspecs import (
    AgentRef,
    CommandReceipt,
    CommandRequest,
    CompactionInfo,
    ContextMessage,
    FamilySettlement,
    HostServices,
    PromptContext,
    PromptSection,
    Refusal,
    ResultAnnotation,
    SessionInfo,
    StepInfo,
    ToolCall,
    ToolDefinition,
    ToolResult,
    ToolSpec,
    TurnSummary,
)
from ptc_plus.adapters.mcp import McpSources
from ptc_plus.discovery import CatalogSnapshot
from ptc_plus.session.commands import CapabilitiesCommands
from ptc_plus.session.contract_memory import ContractDesk
from ptc_plus.session.deliverer import Deliverer
from ptc_plus.session.guarding import Guard
from ptc_plus.session.opener import Opener
from ptc_plus.session.prompt import model_tools, prompt_sections, skill_catalog
from ptc_plus.session.state import SessionState
from ptc_plus.session.table import SessionTable
from ptc_plus.session.toolbox import Toolbox
from ptc_plus.session.usage import UsageLedger

__all__ = ["PtcController", "SessionState"]


class PtcController:
    def __init__(self, services: HostServices) -> None:
        self.services = services
        self.sessions = SessionTable()
        self.mcp = McpSources()
        """The MCP servers each session uses (shared with the process's other controllers by the hub)."""
        self.contracts = ContractDesk()
        """Each session's memory of expanded, shown and used contracts (ADR 0070)."""
        self.usage = UsageLedger(services, self.sessions)
        self.opener = Opener(services, self.sessions, self.mcp, self.usage, self.contracts)
        self.commands = CapabilitiesCommands(services, self.sessions, self.opener)
        self.delivery = Deliverer(services, self.sessions, self.contracts)
        self.guarding = Guard(services, self.sessions)
        self.toolbox = Toolbox(services, self.sessions, self.mcp, self.contracts)

    # -- lifecycle ---------------------------------------------------------------------
    def start(self, info: SessionInfo) -> SessionState:
        return self.opener.start(info)

    def resume(self, info: SessionInfo) -> SessionState:
        return self.opener.resume(info)

    def session(self, agent: AgentRef) -> SessionState | None:
        return self.sessions.get(agent)

    def family_settled(self, family: FamilySettlement) -> None:
        self.usage.family_settled(family)

    async def aclose(self) -> None:
        """Refuse new runs, then abort and await live ones; then stop the MCP servers nobody else holds."""
        await self.toolbox.aclose()
        await self.mcp.aclose()

    # -- the tool-execute seam: use, running cells, used contracts ------------------------
    def dispatching(self, call: ToolCall, spec: ToolSpec) -> None:
        """``call`` reached its owner (use); a top-level ``run_code`` call is a running cell until :meth:`released`."""
        self.sessions.cell_started(call)
        self.usage.dispatching(call, spec)

    def dispatched(self, call: ToolCall, spec: ToolSpec, result: ToolResult) -> None:
        self.usage.dispatched(call, spec, result)
        self.delivery.dispatched(call, spec)

    def released(self, call: ToolCall) -> None:
        self.commands.released(call)

    # -- projections -------------------------------------------------------------------
    def tools(self, agent: AgentRef) -> list[ToolDefinition]:
        return self.toolbox.tools(agent)

    def tool_result(self, call: ToolCall, result: ToolResult) -> ResultAnnotation | None:
        return self.toolbox.tool_result(call, result)

    def discovery(self, agent: AgentRef) -> CatalogSnapshot | None:
        return self.toolbox.discovery(agent)

    def prompt_sections(self, context: PromptContext) -> list[PromptSection]:
        return prompt_sections(self.sessions.get(context.agent))

    def model_tools(self, context: PromptContext) -> list[str] | None:
        return model_tools(self.sessions.get(context.agent), context.tools)

    def skill_catalog(self, context: PromptContext) -> list[str] | None:
        return skill_catalog(self.sessions.get(context.agent))

    def context_messages(self, step: StepInfo) -> list[ContextMessage]:
        """A refresh still pending applies first when no cell runs (a step is a safe boundary)."""
        self.commands.at_boundary(step.agent)
        return self.delivery.context_messages(step)

    def turn_settled(self, summary: TurnSummary) -> None:
        self.delivery.turn_settled(summary)

    def compaction(self, info: CompactionInfo) -> None:
        self.delivery.compaction(info)

    def guard(self, call: ToolCall, spec: ToolSpec) -> Refusal | None:
        return self.guarding.guard(call, spec)

    # -- commands ------------------------------------------------------------------------
    def command(self, request: CommandRequest) -> CommandReceipt | None:
        return self.commands.command(request)

    def refresh(self, agent: AgentRef, *, dry_run: bool = False) -> CommandReceipt:
        return self.commands.refresh(agent, dry_run=dry_run)
