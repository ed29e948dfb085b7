"""Slash commands: routed without any model request; unknown ones fail listing the known ones."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from hookspecs import Concurrency, ReceiptStatus, ToolContext, ToolDefinition, ToolSpec
from hookspecs.i18n import message
from hookspecs.reference import AssistantTurn, ReferenceHost, RequestedCall, ScriptedModel


def tool(name: str, concurrency: Concurrency = Concurrency.PARALLEL) -> ToolDefinition:
    async def handler(arguments: Any, context: ToolContext) -> Any:
        return name

    spec = ToolSpec(name=name, description=name, concurrency=concurrency, source="mcp:demo")
    return ToolDefinition(spec=spec, handler=handler)


@pytest.mark.asyncio
async def test_builtin_commands_make_no_model_request(make_reference_host: Callable[..., ReferenceHost]) -> None:
    model = ScriptedModel(
        [AssistantTurn(tool_calls=(RequestedCall(call_id="k", tool="r", arguments={}),)), AssistantTurn(text="done")]
    )
    async with make_reference_host(tools=[tool("r"), tool("w", Concurrency.EXCLUSIVE)]) as host:
        session = await host.start_session(model=model)
        await session.run_turn("go")
        requests = list(model.requests)
        surface = session.surface.messages()

        helped = session.command("/help")
        assert helped.status is ReceiptStatus.SHOWN
        assert helped.text.splitlines() == [
            f"/compact — {message('host.cmd.compact')}",
            f"/help — {message('host.cmd.help')}",
            f"/tools — {message('host.cmd.tools')}",
        ]
        assert session.command("/").text == helped.text  # a bare slash is /help

        tools = session.command("/tools")
        assert tools.text.splitlines() == ["r [parallel, mcp:demo]", "w [exclusive, mcp:demo]"]
        assert tools.data == {"tools": ["r", "w"]}

        unknown = session.command("/capabilities refresh")
        assert unknown.status is ReceiptStatus.FAILED
        assert unknown.text == message("host.unknown-command", name="capabilities", known="/compact, /help, /tools")
        assert session.surface.messages() == surface  # read-only and failed commands change nothing

        compacted = session.command("/compact")
        assert compacted.status is ReceiptStatus.APPLIED
        assert session.surface.messages() != surface
        assert session.surface.visible_call_ids() == {"k"}
        assert model.requests == requests  # no command asked the model anything
        logged = [(e.data["name"], e.data["args"], e.data["status"]) for e in session.log.of_type("command")]
    assert logged == [
        ("help", [], "shown"),
        ("help", [], "shown"),
        ("tools", [], "shown"),
        ("capabilities", ["refresh"], "failed"),
        ("compact", [], "applied"),
    ]


@pytest.mark.asyncio
async def test_unbalanced_quotes_give_a_failed_receipt(make_reference_host: Callable[..., ReferenceHost]) -> None:
    model = ScriptedModel([])
    async with make_reference_host() as host:
        session = await host.start_session(model=model)
        receipt = session.command('/compact "never closed')
        assert receipt.status is ReceiptStatus.FAILED
        assert receipt.text == message("host.command-failed", name="compact", detail="No closing quotation")
        assert not list(session.log.of_type("compaction"))
        assert [e.data["status"] for e in session.log.of_type("command")] == ["failed"]
    assert model.requests == []
