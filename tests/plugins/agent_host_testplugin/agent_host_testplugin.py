"""A plugin that exists only to be discovered through the ``agent_host`` entry-point group.

Never installed (ADR 0061): the tests that need it put this directory, the module and
its ``.dist-info``, on ``sys.path``, where ``importlib.metadata`` finds its entry point.
"""

from __future__ import annotations

from collections.abc import Sequence

from hookspecs import CommandReceipt, CommandRequest, CommandSpec, HostServices, PromptContext, PromptSection, hookimpl
from hookspecs.types import ReceiptStatus


@hookimpl
def agent_host_prompt_sections(context: PromptContext) -> Sequence[PromptSection]:
    return [PromptSection(name="testplugin", order=900, text="The test plugin is loaded.")]


@hookimpl
def agent_host_commands() -> Sequence[CommandSpec]:
    return [CommandSpec(name="testplugin", summary="answer that the test plugin is loaded")]


@hookimpl
def agent_host_command(request: CommandRequest, services: HostServices) -> CommandReceipt | None:
    if request.name != "testplugin":
        return None
    return CommandReceipt(status=ReceiptStatus.SHOWN, text="testplugin here")
