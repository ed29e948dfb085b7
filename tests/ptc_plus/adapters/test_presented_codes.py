"""What the llm plugin and mcp-serve show a model of a failed call: its code once, never doubled.

Both front doors show a result through the reference host's one :func:`seat_text` (ADR 0121).
"""

from __future__ import annotations

from hookspecs.reference import seat_text
from hookspecs.types import ResultStatus, ToolError, ToolResult
from ptc_plus.doors.llm import conversation
from ptc_plus.doors.mcp import serve_session


def _failed(code: str, message: str) -> ToolResult:
    return ToolResult(
        call_id="c", tool="run_code", status=ResultStatus.ERROR, error=ToolError(code=code, message=message)
    )


def test_a_message_that_names_its_code_is_shown_as_it_is() -> None:
    report = "exception (PTC-2101): ZeroDivisionError: division by zero"
    assert seat_text(_failed("PTC-2101", report)) == report


def test_a_message_without_its_code_gets_it_in_front() -> None:
    assert seat_text(_failed("PTC-2201", "No tool named x")) == "PTC-2201: No tool named x"


def test_a_value_is_shown_as_text_or_canonical_json() -> None:
    assert seat_text(ToolResult(call_id="c", tool="t", status=ResultStatus.OK, value="plain")) == "plain"
    shown = seat_text(ToolResult(call_id="c", tool="t", status=ResultStatus.OK, value={"b": 1, "a": [2]}))
    assert shown == '{"a":[2],"b":1}'


def test_both_front_doors_show_results_through_the_one_function() -> None:
    assert conversation.seat_text is seat_text
    assert serve_session.seat_text is seat_text
