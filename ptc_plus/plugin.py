"""The PTC Plus plugin: hook implementations registered through the ``agent_host`` entry point.

This module only routes hooks to the :class:`~ptc_plus.session.controller.PtcController`
of the calling host (one per host services object, so several hosts in one
process never share state).
"""

from __future__ import annotations

import weakref
from collections.abc import Awaitable, Sequence

from hookspecs import (
    AgentRef,
    CommandReceipt,
    CommandRequest,
    CommandSpec,
    ContextMessage,
    HostServices,
    PromptContext,
    PromptSection,
    Refusal,
    SessionInfo,
    StepInfo,
    ToolCall,
    ToolDefinition,
    ToolSpec,
    TurnSummary,
    hookimpl,
)
from ptc_plus.session.controller import PtcController
from ptc_plus.session.report import command_specs

_controllers: weakref.WeakKeyDictionary[HostServices, PtcController] = weakref.WeakKeyDictionary()
# Prompt hooks receive no services: they find the controller through the session id.
_by_session: weakref.WeakValueDictionary[str, PtcController] = weakref.WeakValueDictionary()


def controller(services: HostServices) -> PtcController:
    found = _controllers.get(services)
    if found is None:
        found = _controllers[services] = PtcController(services)
    return found


@hookimpl
def agent_host_session_start(session: SessionInfo, services: HostServices) -> None:
    ctl = controller(services)
    ctl.start(session)
    _by_session[session.agent.session_id] = ctl


@hookimpl
def agent_host_session_resume(session: SessionInfo, services: HostServices) -> None:
    ctl = controller(services)
    ctl.resume(session)
    _by_session[session.agent.session_id] = ctl


@hookimpl
def agent_host_agent_fork(parent: SessionInfo, child: SessionInfo, services: HostServices) -> None:
    controller(services).fork(parent, child)


@hookimpl
def agent_host_turn_settled(summary: TurnSummary, services: HostServices) -> None:
    # A settled turn proves its steps' context messages were committed (catalog delivery).
    controller(services).turn_settled(summary)


@hookimpl
def agent_host_tools(agent: AgentRef, services: HostServices) -> Sequence[ToolDefinition]:
    return controller(services).tools(agent)


@hookimpl
def agent_host_prompt_sections(context: PromptContext) -> Sequence[PromptSection]:
    ctl = _by_session.get(context.agent.session_id)
    return ctl.prompt_sections(context) if ctl is not None else []


@hookimpl
def agent_host_model_tools(context: PromptContext) -> Sequence[str] | None:
    ctl = _by_session.get(context.agent.session_id)
    return ctl.model_tools(context) if ctl is not None else None


@hookimpl
def agent_host_skill_catalog(context: PromptContext) -> Sequence[str] | None:
    ctl = _by_session.get(context.agent.session_id)
    return ctl.skill_catalog(context) if ctl is not None else None


@hookimpl
def agent_host_context_messages(step: StepInfo, services: HostServices) -> Sequence[ContextMessage]:
    return controller(services).context_messages(step)


@hookimpl
def agent_host_guard(call: ToolCall, spec: ToolSpec, services: HostServices) -> Refusal | None:
    return controller(services).guard(call, spec)


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
