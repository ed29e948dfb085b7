"""The chat host's approver: marked tools are asked about; yes runs, no and nobody-to-ask refuse."""

from __future__ import annotations

from hookspecs import AgentRef, ToolCall, ToolSpec
from ptc_plus.cli.chat_approval import approver, marked_tools

AGENT = AgentRef(session_id="s", agent_id="a", family_id="s")


def call(tool: str) -> tuple[ToolCall, ToolSpec]:
    return ToolCall(call_id="c", tool=tool, arguments={"path": "x"}, caller=AGENT), ToolSpec(name=tool, description="")


def test_only_marked_tools_are_asked_and_the_answer_decides() -> None:
    asked: list[str] = []
    answers = iter([True, False])

    def ask(question: str) -> bool:
        asked.append(question)
        return next(answers)

    guard = approver(marked_tools(("write_file", "notes_delete,  ")), ask)
    assert guard is not None
    assert guard(*call("read_file")) is None and asked == []
    assert guard(*call("write_file")) is None
    refused = guard(*call("notes_delete"))
    assert refused is not None and refused.code == "not-approved" and "did not approve" in refused.reason
    assert asked == ['Allow write_file({"path":"x"})?', 'Allow notes_delete({"path":"x"})?']


def test_all_marks_every_tool_and_nobody_to_ask_refuses() -> None:
    guard = approver(marked_tools(("all",)), None)
    assert guard is not None
    refused = guard(*call("read_file"))
    assert refused is not None and "no terminal" in refused.reason


def test_nothing_marked_needs_no_approver() -> None:
    assert approver(marked_tools(()), None) is None
