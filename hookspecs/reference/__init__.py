"""The reference host: a small, real host implementing the whole contract.

It is the embedded default for ``ptc-plus demo`` and the test bed of the
plugin: sessions as append-only JSONL logs, JSON Schema validation, an
ordered scheduler, skills, a guard, slash commands, compaction, a scripted
model and an OpenAI-compatible chat client.

Write a plugin
--------------
A plugin is any object (a module, an instance) whose methods are marked
:data:`hookspecs.hookimpl`; it implements only the hooks it needs. One
that offers the slash command ``/hello``::

    # hello_plugin.py
    from hookspecs import CommandReceipt, CommandRequest, CommandSpec, HostServices, ReceiptStatus, hookimpl

    @hookimpl
    def agent_host_commands() -> list[CommandSpec]:
        return [CommandSpec(name="hello", summary="greet someone")]

    @hookimpl
    def agent_host_command(request: CommandRequest, services: HostServices) -> CommandReceipt | None:
        if request.name != "hello":
            return None  # firstresult: another plugin (or the host) handles it
        return CommandReceipt(status=ReceiptStatus.SHOWN, text="hello " + " ".join(request.args))

A host finds installed plugins through the entry-point group
:data:`hookspecs.ENTRY_POINT_GROUP` (``[project.entry-points.agent_host]``
``hello = "hello_plugin"`` in the plugin's ``pyproject.toml``).

Test it against this host. The fixtures of :mod:`hookspecs.reference.pytest_plugin`
(``reference_workspace``, ``make_reference_host``) are opt-in, as tox's are:
name them in the top-level ``conftest.py`` of your tests::

    pytest_plugins = ["hookspecs.reference.pytest_plugin"]

then::

    import hello_plugin

    async def test_hello(make_reference_host):
        async with make_reference_host(plugins=[hello_plugin]) as host:
            session = await host.start_session()
            assert session.command("/hello world").text == "hello world"

``make_reference_host`` loads no entry points unless asked
(``load_entry_points=True``), so a test sees exactly the plugins it hands in.
"""

from __future__ import annotations

from hookspecs.reference.builtin import Approver, HostBuiltins
from hookspecs.reference.children import ChildProvider, ReferenceChildAgents
from hookspecs.reference.errors import HostError
from hookspecs.reference.host import ReferenceHost
from hookspecs.reference.loading import BLOCKLIST_ENV
from hookspecs.reference.model import AssistantTurn, Model, ModelRequest, RequestedCall, ScriptedModel
from hookspecs.reference.openai_client import OpenAIChatModel, RequestUsage
from hookspecs.reference.scheduler import LaneClosed, OrderedLane
from hookspecs.reference.session import Session
from hookspecs.reference.session_log import open_elsewhere, read_events
from hookspecs.reference.surface import seat_text

__all__ = [
    "BLOCKLIST_ENV",
    "Approver",
    "AssistantTurn",
    "ChildProvider",
    "HostBuiltins",
    "HostError",
    "LaneClosed",
    "Model",
    "ModelRequest",
    "OpenAIChatModel",
    "OrderedLane",
    "ReferenceChildAgents",
    "ReferenceHost",
    "RequestUsage",
    "RequestedCall",
    "ScriptedModel",
    "Session",
    "open_elsewhere",
    "read_events",
    "seat_text",
]
