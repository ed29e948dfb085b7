"""Argument validation is bounded work (ADR 0087): a few errors, and large arguments off the event loop."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any

import pytest

from hookspecs import HostServices, Refusal, ToolCall, ToolContext, ToolSpec, hookimpl
from hookspecs.reference import ReferenceHost, dispatch
from hookspecs.reference.registry import MAX_ERRORS, validation_errors

from .test_dispatch import bounded, nested, tool

NUMBERS = {
    "type": "object",
    "properties": {"numbers": {"type": "array", "items": {"type": "integer"}}},
    "required": ["numbers"],
}


def test_validation_stops_after_the_first_few_errors() -> None:
    spec = ToolSpec(name="tally", description="", input_schema=NUMBERS)
    seen: set[int] = set()

    class Counted(list[Any]):
        def __getitem__(self, index: Any) -> Any:  # how the validator reaches each item
            seen.add(index)
            return super().__getitem__(index)

    problems = validation_errors(spec, {"numbers": Counted(["not a number"] * 100_000)})
    assert len(problems) == MAX_ERRORS + 1 and "stopped" in problems[-1], problems
    assert len(seen) <= MAX_ERRORS + 2, f"validation walked {len(seen)} items for {MAX_ERRORS} errors"


def test_a_problem_quoting_a_huge_value_is_cut() -> None:
    spec = ToolSpec(name="t", description="", input_schema={"type": "object", "properties": {"s": {"type": "integer"}}})
    (problem,) = validation_errors(spec, {"s": "x" * 1_000_000})
    assert len(problem) <= 300 and problem.startswith("s: ")


@pytest.mark.asyncio
async def test_large_arguments_are_validated_off_the_loop_in_submission_order(
    make_reference_host: Callable[..., ReferenceHost], monkeypatch: pytest.MonkeyPatch
) -> None:
    threads: dict[int, str] = {}
    real = validation_errors

    def watched(spec: ToolSpec, arguments: Any, *rest: Any) -> list[str]:
        threads[len(arguments.get("numbers", ()))] = threading.current_thread().name
        return real(spec, arguments, *rest)  # the view's compiled validator too (ADR 0123)

    monkeypatch.setattr(dispatch, "validation_errors", watched)
    guarded: list[str] = []

    class Order:
        @hookimpl
        def agent_host_guard(self, call: ToolCall, spec: ToolSpec, services: HostServices) -> Refusal | None:
            guarded.append(call.call_id)
            return None

    async def count(arguments: Any, context: ToolContext) -> Any:
        return len(arguments["numbers"])

    async def outer(arguments: Any, context: ToolContext) -> Any:
        sizes = (40_000, 3, 40_000, 2)
        calls = [nested(context, n, "count", {"numbers": [1] * size}) for n, size in enumerate(sizes)]
        results = await asyncio.gather(*(context.services.dispatch(c) for c in calls))
        return [r.value for r in results]

    tools = [tool("outer", outer), tool("count", count, schema=NUMBERS)]
    async with make_reference_host(tools=tools, plugins=[Order()]) as host:
        session = await host.start_session()
        result = await bounded(session.call_tool("outer", {}))
    assert result.value == [40_000, 3, 40_000, 2]
    assert threads[40_000] != threading.main_thread().name
    assert threads[3] == threading.main_thread().name
    outer = session.call_id("direct-1")
    assert guarded == [outer, *(f"{outer}:t:{n}" for n in range(4))]
