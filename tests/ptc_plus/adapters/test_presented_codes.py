"""What the llm plugin and mcp-serve show a model of a failed call: its code once, never doubled."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from hookspecs.types import ResultStatus, ToolError, ToolResult
from ptc_plus.adapters.llm.conversation import _presented as llm_presented
from ptc_plus.adapters.mcp.serve_session import _presented as served_presented


def _failed(code: str, message: str) -> ToolResult:
    return ToolResult(
        call_id="c", tool="run_code", status=ResultStatus.ERROR, error=ToolError(code=code, message=message)
    )


@pytest.mark.parametrize("presented", [llm_presented, served_presented])
def test_a_message_that_names_its_code_is_shown_as_it_is(presented: Callable[[ToolResult], str]) -> None:
    report = "exception (PTC-2101): ZeroDivisionError: division by zero"
    assert presented(_failed("PTC-2101", report)) == report


@pytest.mark.parametrize("presented", [llm_presented, served_presented])
def test_a_message_without_its_code_gets_it_in_front(presented: Callable[[ToolResult], str]) -> None:
    assert presented(_failed("PTC-2201", "No tool named x")) == "PTC-2201: No tool named x"
