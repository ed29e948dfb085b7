"""The reference host's own plugin: the innermost tool body, its guard and commands; its own prompt sections.

Registered first, so plugins loaded later wrap or pre-empt it. Its
``agent_host_tool_execute`` is ``trylast``: it is the body every wrapper
surrounds. The host's prompt sections are not a hook implementation: they
need the ``skill_catalog`` answer, and no implementation calls another hook
while pluggy runs it (ADR 0055).
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from hookspecs.i18n import message
from hookspecs.markers import hookimpl
from hookspecs.reference.skills import catalog_text
from hookspecs.services import HostServices, ToolContext, ToolFailure
from hookspecs.types import (
    CommandReceipt,
    CommandRequest,
    CommandSpec,
    PromptContext,
    PromptSection,
    ReceiptStatus,
    Refusal,
    ResultStatus,
    SkillSpec,
    ToolCall,
    ToolError,
    ToolResult,
    ToolSpec,
)

if TYPE_CHECKING:
    from hookspecs.reference.host import ReferenceHost

Approver = Callable[[ToolCall, ToolSpec], Refusal | None]
"""The host's approval step: ``None`` approves, a :class:`Refusal` refuses."""


def host_sections(context: PromptContext, listed: Sequence[SkillSpec]) -> list[PromptSection]:
    """The host's own system-prompt sections: its preamble and, if any skill is ``listed``, the skill catalog."""
    sections = [PromptSection(name="host", order=0, text=message("host.prompt", workspace=str(context.workspace)))]
    if listed:
        text = message("host.skills-prompt") + "\n" + catalog_text(listed)
        sections.append(PromptSection(name="host-skills", order=100, text=text))
    return sections


class HostBuiltins:
    """Hook implementations of the host itself."""

    def __init__(self, host: ReferenceHost, approver: Approver | None) -> None:
        self._host = host
        self._approver = approver

    @hookimpl(trylast=True)
    async def agent_host_tool_execute(self, call: ToolCall, spec: ToolSpec, context: ToolContext) -> ToolResult:
        if context.body is None:
            raise TypeError(f"no body for {call.tool!r}: the host dispatches every call with its body")
        try:
            value = await context.body(call.arguments, context)
        except ToolFailure as failure:
            return ToolResult(
                call_id=call.call_id,
                tool=call.tool,
                status=ResultStatus.ERROR,
                error=ToolError(code=failure.code, message=failure.message, data=failure.data),
            )
        if isinstance(value, ToolResult):
            return value
        return ToolResult(call_id=call.call_id, tool=call.tool, status=ResultStatus.OK, value=value)

    @hookimpl(trylast=True)
    def agent_host_guard(self, call: ToolCall, spec: ToolSpec, services: HostServices) -> Refusal | None:
        return self._approver(call, spec) if self._approver is not None else None

    @hookimpl
    def agent_host_commands(self) -> Sequence[CommandSpec]:
        return [
            CommandSpec(name="help", summary=message("host.cmd.help")),
            CommandSpec(name="tools", summary=message("host.cmd.tools")),
            CommandSpec(name="compact", summary=message("host.cmd.compact")),
        ]

    @hookimpl(trylast=True)
    def agent_host_command(self, request: CommandRequest, services: HostServices) -> CommandReceipt | None:
        if request.name == "help":
            lines = [f"/{c.name} — {c.summary}" for c in sorted(self._host.command_table(), key=lambda c: c.name)]
            return CommandReceipt(status=ReceiptStatus.SHOWN, text="\n".join(lines))
        if request.name == "tools":
            specs = services.tool_view(request.agent)
            lines = [f"{s.name} [{s.concurrency.value}, {s.source}]" for s in specs]
            return CommandReceipt(
                status=ReceiptStatus.SHOWN, text="\n".join(lines), data={"tools": [s.name for s in specs]}
            )
        if request.name == "compact":
            session = self._host.session(request.agent.session_id)
            info = session.compact(summary=shlex.join(request.args) or None)
            text = message("host.compacted", kept=len(info.kept_call_ids))
            return CommandReceipt(status=ReceiptStatus.APPLIED, text=text)
        return None
