"""The llm plugin (entry point ``ptc_plus`` in llm's group ``llm``): code mode with the plan inside llm.

``register_tools`` offers ``run_code`` (and ``read_spill``) over llm's other
registered tools, for the conversation llm is about to prompt, with the PTC
text and the conversation's catalog in ``run_code``'s description;
``register_commands`` mounts ``llm capabilities`` (ADR 0074).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click
import llm

from ptc_plus.doors.llm import host_tools
from ptc_plus.doors.llm.chain_context import ChainContext, current_call, current_gathering
from ptc_plus.doors.llm.commands import capabilities_group
from ptc_plus.doors.llm.errors import RunFailed
from ptc_plus.errors import PtcError

if TYPE_CHECKING:
    from ptc_plus.doors import SeatAnswer, SeatTool

# The session machinery (:mod:`.conversation`: the embedded host and the plugin) is imported when a tool is
# gathered or called, never at llm's start, which loads this module for every llm command.

_offered: dict[str | None, list[SeatTool]] = {}
"""What this process offered per conversation: llm asks for its tools more than once per request."""


@llm.hookimpl
def register_tools(register: Callable[..., None]) -> None:
    if host_tools.Gathering.active:
        return
    gathering = current_gathering()
    if gathering.requested is not None and not gathering.requested & host_tools.PLUGIN_TOOLS:
        return  # a prompt that does not use PTC Plus opens no session (llm gathers tools for every prompt)
    conversation = gathering.conversation_id
    if conversation is None or conversation not in _offered:
        from ptc_plus.doors.llm.conversation import blocking

        try:
            _offered[conversation] = blocking(lambda: _offer(conversation, host_tools.other_tools()))
        except PtcError as error:  # llm and its other tools keep working; say once why ours are missing
            click.echo(f"ptc-plus: {error.code}: {error.message()}", err=True)
            return
    for tool in _offered[conversation]:
        register(
            llm.Tool(
                name=tool.name,
                description=tool.description,
                input_schema=dict(tool.input_schema),
                implementation=_implementation(tool.name),
            )
        )


async def _offer(conversation: str | None, tools: dict[str, llm.Tool]) -> list[SeatTool]:
    from ptc_plus.doors.llm.conversation import opened

    async with opened(conversation, host_tools.definitions(tools, ChainContext())) as session:
        session.open_turn()
        return session.offered()


def _implementation(name: str) -> Callable[..., str]:
    def implementation(llm_tool_call: llm.ToolCall, **arguments: Any) -> str:
        from ptc_plus.doors.llm.conversation import blocking

        chain = current_call()  # read here, on llm's own stack, before the host's thread takes over
        call_id = llm_tool_call.tool_call_id or f"llm-{name}"
        answer = blocking(lambda: _call(chain, name, arguments, call_id))
        if not answer.ok:
            raise RunFailed(answer.full_text())
        return answer.full_text()

    implementation.__name__ = name
    return implementation


async def _call(chain: ChainContext, name: str, arguments: dict[str, Any], call_id: str) -> SeatAnswer:
    from ptc_plus.doors.llm.conversation import opened

    tools = host_tools.other_tools()
    definitions = host_tools.definitions(tools, chain)
    approver = host_tools.approver(chain, tools)
    async with opened(chain.conversation_id, definitions, approver=approver) as session:
        return await session.call(name, arguments, call_id)


@llm.hookimpl
def register_commands(cli: click.Group) -> None:
    cli.add_command(capabilities_group(host_tools.other_tools), "capabilities")
