"""The PTC Plus plugin: hook implementations registered through the ``agent_host`` entry point.

This module only routes hooks to the :class:`~ptc_plus.session.controller.PtcController`
of the calling host (one per host services object, so several hosts in one
process never share state). Every hook receives the host's services (contract
1.1), so the controller is always found through them, never by session id.
"""

from __future__ import annotations

import weakref
from collections.abc import Awaitable, Generator, Sequence

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
    TurnSummary,
    hookimpl,
)
from ptc_plus.session import PtcController, command_specs

# Keyed by the host (its services object), never by session: a pluggy module has no other per-host slot.
_controllers: weakref.WeakKeyDictionary[HostServices, PtcController] = weakref.WeakKeyDictionary()


def controller(services: HostServices) -> PtcController:
    found = _controllers.get(services)
    if found is None:
        found = _controllers[services] = PtcController(services)
    return found


@hookimpl
def agent_host_session_start(session: SessionInfo, services: HostServices) -> None:
    controller(services).start(session)


@hookimpl
def agent_host_session_resume(session: SessionInfo, services: HostServices) -> None:
    controller(services).resume(session)


@hookimpl
def agent_host_compaction(compaction: CompactionInfo, services: HostServices) -> None:
    # What the compaction dropped from the surface is recovered at the next step, within its budget (ADR 0070).
    controller(services).compaction(compaction)


@hookimpl
def agent_host_turn_settled(summary: TurnSummary, services: HostServices) -> None:
    # A settled turn proves its steps' context messages were committed (catalog delivery).
    controller(services).turn_settled(summary)


@hookimpl
def agent_host_family_settled(family: FamilySettlement, services: HostServices) -> None:
    # The host's proof that the family is at rest: only now is it a sample (SPEC §6, ADR 0067).
    controller(services).family_settled(family)


@hookimpl
def agent_host_tools(agent: AgentRef, services: HostServices) -> Sequence[ToolDefinition]:
    return controller(services).tools(agent)


@hookimpl
def agent_host_prompt_sections(context: PromptContext, services: HostServices) -> Sequence[PromptSection]:
    return controller(services).prompt_sections(context)


@hookimpl
def agent_host_model_tools(context: PromptContext, services: HostServices) -> Sequence[str] | None:
    return controller(services).model_tools(context)


@hookimpl
def agent_host_skill_catalog(context: PromptContext, services: HostServices) -> Sequence[str] | None:
    return controller(services).skill_catalog(context)


@hookimpl
def agent_host_context_messages(step: StepInfo, services: HostServices) -> Sequence[ContextMessage]:
    return controller(services).context_messages(step)


@hookimpl
def agent_host_guard(call: ToolCall, spec: ToolSpec, services: HostServices) -> Refusal | None:
    return controller(services).guard(call, spec)


@hookimpl(wrapper=True)
def agent_host_tool_execute(
    call: ToolCall, spec: ToolSpec, context: ToolContext
) -> Generator[None, ToolResult, ToolResult]:
    # The host runs this seam only for a call that passed validation and the guard, top-level or nested:
    # reaching it is use, whatever the body then does (ok, error, cancelled: an exception passes through).
    ctl = controller(context.services)
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
    return controller(services).tool_result(call, result)


@hookimpl
def agent_host_commands() -> Sequence[CommandSpec]:
    return command_specs()


@hookimpl
def agent_host_command(request: CommandRequest, services: HostServices) -> CommandReceipt | None:
    return controller(services).command(request)


@hookimpl
def agent_host_shutdown(services: HostServices) -> Awaitable[None] | None:
    ctl = _controllers.pop(services, None)
    return ctl.aclose() if ctl is not None else None
