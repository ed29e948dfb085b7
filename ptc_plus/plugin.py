"""The PTC Plus plugin: hook implementations registered through the ``agent_host`` entry point.

This module only routes hooks to the :class:`~ptc_plus.session.controller.PtcController`
of the calling host. Every hook receives the host's services (contract 1.1),
and the controller lives in those services' :attr:`~hookspecs.HostServices.plugin_state`
(contract 1.4, ADR 0089): the state is handed to each hook, never found in a
module-level map, so several hosts in one process never share it.

A host without ``plugin_state`` (contract 1.3 or older) gets no controller: every hook
then does nothing (the host keeps its own provision, no code mode), and the first
session start says why in the log — a plugin degrades, it does not fail.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Generator, Sequence
from typing import TYPE_CHECKING

from hookspecs.markers import hookimpl
from ptc_plus.errors import PtcError

if TYPE_CHECKING:  # the hooks' value types, for their annotations only: registering needs the marker alone
    from hookspecs import (
        AgentRef,
        CommandReceipt,
        CommandRequest,
        CommandSpec,
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
        ToolContext,
        ToolDefinition,
        ToolResult,
        ToolSpec,
        TurnStart,
        TurnSummary,
    )
    from ptc_plus.session import PtcController
    from ptc_plus.workflow import WorkflowDesk

STATE_KEY = "ptc_plus"
"""This plugin's entry in the host's :attr:`~hookspecs.HostServices.plugin_state` (its entry-point name)."""
WORKFLOW_KEY = "ptc_plus.workflow"
"""The workflow desk's entry beside it, for a host that lends child agents (ADR 0116)."""

_log = logging.getLogger(__name__)


def held(services: HostServices) -> PtcController | None:
    """The calling host's controller, created on first use in the host's plugin state;
    ``None`` for a host that has no plugin state (contract < 1.4)."""
    state = getattr(services, "plugin_state", None)
    if state is None:
        return None
    # Imported at first use, not when the host loads the plugin: registering the hooks needs none of
    # the session's machinery (the runtime, the catalog, the config; issue 32, ADR 0115).
    from ptc_plus.session import PtcController

    found = state.get(STATE_KEY)
    if not isinstance(found, PtcController):
        found = state[STATE_KEY] = PtcController(services)
    return found


def controller(services: HostServices) -> PtcController:
    """The calling host's controller (for embedders holding a 1.4 host: the demo, adapters, tests).

    :raises PtcError: ``PTC-1003`` when the host has no plugin state (contract < 1.4).
    """
    found = held(services)
    if found is None:
        raise PtcError("PTC-1003", host=type(services).__name__)
    return found


def desk(services: HostServices) -> WorkflowDesk | None:
    """The calling host's workflow desk, created on first use; ``None`` when the host lends no child agents
    (or has no plugin state)."""
    from ptc_plus.workflow import WorkflowDesk

    state = getattr(services, "plugin_state", None)
    if state is None:
        return None
    found = state.get(WORKFLOW_KEY)
    if not isinstance(found, WorkflowDesk):
        found = WorkflowDesk.for_host(services)
        if found is None:
            return None
        state[WORKFLOW_KEY] = found
    return found


def _desk_type() -> type[WorkflowDesk]:
    from ptc_plus.workflow import WorkflowDesk

    return WorkflowDesk


def _workflow_tools(ctl: PtcController, agent: AgentRef, services: HostServices) -> list[ToolDefinition]:
    """``run_workflow`` where code mode is in force and the host lends child agents (ADR 0116); ``ralph`` in a
    turn whose user asked for it (ADR 0125)."""
    state = ctl.session(agent)
    found = desk(services) if state is not None else None
    return found.tools(agent, code_mode=state.ptc) if found is not None and state is not None else []


@hookimpl
def agent_host_session_start(session: SessionInfo, services: HostServices) -> None:
    if (ctl := held(services)) is None:
        _log.warning("%s", PtcError("PTC-1003", host=type(services).__name__).message())
        return
    ctl.start(session)


@hookimpl
def agent_host_session_resume(session: SessionInfo, services: HostServices) -> None:
    if (ctl := held(services)) is not None:
        ctl.resume(session)


@hookimpl
def agent_host_compaction(compaction: CompactionInfo, services: HostServices) -> None:
    # What the compaction dropped from the surface is recovered at the next step, within its budget (ADR 0070).
    if (ctl := held(services)) is not None:
        ctl.compaction(compaction)


@hookimpl
def agent_host_turn_started(turn: TurnStart, services: HostServices) -> None:
    # Contract 1.6: only here does the plugin see what the user asked; it decides the turn's ralph tool.
    if held(services) is None:
        return
    from ptc_plus.workflow import turn_asks_for_ralph

    asked = turn_asks_for_ralph(turn)
    found = desk(services) if asked or WORKFLOW_KEY in services.plugin_state else None
    if found is not None:
        found.turn_started(turn)


@hookimpl
def agent_host_turn_settled(summary: TurnSummary, services: HostServices) -> None:
    # A settled turn proves its steps' context messages were committed (catalog delivery).
    if (ctl := held(services)) is not None:
        ctl.turn_settled(summary)
        if isinstance(found := services.plugin_state.get(WORKFLOW_KEY), _desk_type()):
            found.turn_settled(summary)


@hookimpl
def agent_host_turn_ended(agent: AgentRef, turn: int, services: HostServices) -> None:
    # Contract 1.7: a failed turn never settles; its ralph grant must still end with it (ADR 0133).
    if held(services) is not None and isinstance(found := services.plugin_state.get(WORKFLOW_KEY), _desk_type()):
        found.turn_ended(agent, turn)


@hookimpl
def agent_host_family_settled(family: FamilySettlement, services: HostServices) -> None:
    # The host's proof that the family is at rest: only now is it a sample (ADR 0067).
    if (ctl := held(services)) is not None:
        ctl.family_settled(family)


@hookimpl
def agent_host_tools(agent: AgentRef, services: HostServices) -> Sequence[ToolDefinition]:
    ctl = held(services)
    return [*ctl.tools(agent), *_workflow_tools(ctl, agent, services)] if ctl is not None else []


@hookimpl
def agent_host_prompt_sections(context: PromptContext, services: HostServices) -> Sequence[PromptSection]:
    ctl = held(services)
    return ctl.prompt_sections(context) if ctl is not None else []


@hookimpl
def agent_host_model_tools(context: PromptContext, services: HostServices) -> Sequence[str] | None:
    ctl = held(services)
    return ctl.model_tools(context) if ctl is not None else None


@hookimpl
def agent_host_skill_catalog(context: PromptContext, services: HostServices) -> Sequence[str] | None:
    ctl = held(services)
    return ctl.skill_catalog(context) if ctl is not None else None


@hookimpl
def agent_host_context_messages(step: StepInfo, services: HostServices) -> Sequence[ContextMessage]:
    ctl = held(services)
    if ctl is None:
        return []
    found = desk(services) if WORKFLOW_KEY in services.plugin_state else None  # only a desk that ever ran
    return [*ctl.context_messages(step), *(found.context_messages(step) if found is not None else [])]


@hookimpl
def agent_host_guard(call: ToolCall, spec: ToolSpec, services: HostServices) -> Refusal | None:
    ctl = held(services)
    return ctl.guard(call, spec) if ctl is not None else None


@hookimpl(wrapper=True)
def agent_host_tool_execute(
    call: ToolCall, spec: ToolSpec, context: ToolContext
) -> Generator[None, ToolResult, ToolResult]:
    # The host runs this seam only for a call that passed validation and the guard, top-level or nested:
    # reaching it is use, whatever the body then does (ok, error, cancelled: an exception passes through).
    ctl = held(context.services)
    if ctl is None:
        return (yield)
    ctl.dispatching(call, spec)
    try:
        result = yield
        ctl.dispatched(call, spec, result)
    finally:
        # Raised or returned, the call is over: a cell that ended may let a waiting refresh apply.
        ctl.released(call)
    return result


@hookimpl
def agent_host_tool_result(call: ToolCall, result: ToolResult, services: HostServices) -> ResultAnnotation | None:
    # The model display boundary: a large top-level result becomes a preview plus a spill handle (ADR 0069).
    ctl = held(services)
    return ctl.tool_result(call, result) if ctl is not None else None


@hookimpl
def agent_host_commands() -> Sequence[CommandSpec]:
    from ptc_plus.session import command_specs
    from ptc_plus.workflow import workflow_commands

    return [*command_specs(), *workflow_commands()]


@hookimpl
def agent_host_command(request: CommandRequest, services: HostServices) -> CommandReceipt | None:
    ctl = held(services)
    if ctl is None:
        return None
    import attrs

    from ptc_plus.workflow import WorkflowDesk, workflow_commands

    if any(spec.name == request.name for spec in workflow_commands()):
        return WorkflowDesk.command_for(desk(services), request)
    receipt = ctl.command(request)
    if receipt is not None and request.name == "capabilities" and not request.args:
        # Whether child agents are lent decides the workflow tools; /capabilities says so (ADR 0116).
        line = WorkflowDesk.availability(desk(services), ctl.session(request.agent) is not None)
        receipt = attrs.evolve(receipt, text=f"{receipt.text}\n{line}")
    return receipt


@hookimpl
def agent_host_shutdown(services: HostServices) -> Awaitable[None] | None:
    # The host drops its plugin state after shutdown; the controller leaves it now, closing.
    state = getattr(services, "plugin_state", None)
    ctl = state.pop(STATE_KEY, None) if state is not None else None
    found = state.pop(WORKFLOW_KEY, None) if state is not None else None
    if ctl is None and found is None:
        return None
    from ptc_plus.session import PtcController
    from ptc_plus.workflow import WorkflowDesk

    closing = [c.aclose() for c in (found, ctl) if isinstance(c, PtcController | WorkflowDesk)]
    return _all(closing) if closing else None


async def _all(closing: Sequence[Awaitable[None]]) -> None:
    # Workflows first: their children are sessions of this host, the controller's runtimes run their cells.
    for each in closing:
        await each
