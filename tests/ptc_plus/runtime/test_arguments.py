"""Programs call tools with the SDK's argument names; the host receives the schema's real names."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
import pytest_asyncio

from hookspecs import ToolContext, ToolDefinition, ToolResult, ToolSpec
from hookspecs.reference import ReferenceHost, Session
from ptc_plus.runtime.arguments import SpecLookup, real_arguments, renames_for
from ptc_plus.runtime.code_runtime import CodeRuntime
from ptc_plus.runtime.errors import ArgumentConflict
from ptc_plus.runtime.tool import run_code_definition
from ptc_plus.sdk import render_tool

from .conftest import limits_with, tool

ODD_SCHEMA = {
    "type": "object",
    "properties": {
        "odd-name": {"type": "integer"},
        "odd_name": {"type": "integer"},
        "class": {"type": "integer"},
        "plain": {"type": "integer"},
    },
    "additionalProperties": False,
}
ODD_SPEC = ToolSpec(name="odd", description="odd argument names", input_schema=ODD_SCHEMA)


def test_the_sdk_shows_these_names() -> None:
    # The names a program sees in the SDK text: the test programs below use exactly these.
    assert render_tool(ODD_SPEC).argument_names == {
        "class_": "class",
        "odd_name": "odd_name",
        "odd_name_2": "odd-name",
        "plain": "plain",
    }
    assert renames_for(ODD_SPEC) == {"class_": "class", "odd_name_2": "odd-name"}


def test_real_arguments_maps_passes_through_and_refuses_conflicts() -> None:
    given = {"odd_name_2": 1, "class_": 2, "odd_name": 3, "unknown": 4}
    assert real_arguments(ODD_SPEC, given) == {"odd-name": 1, "class": 2, "odd_name": 3, "unknown": 4}
    untouched = {"odd-name": 1, "plain": 2}
    assert real_arguments(ODD_SPEC, untouched) is untouched
    with pytest.raises(ArgumentConflict):
        real_arguments(ODD_SPEC, {"class_": 1, "class": 2})
    with pytest.raises(ArgumentConflict):
        real_arguments(ODD_SPEC, {"class": 1, "class_": 2})


def test_tables_follow_the_spec_not_the_name() -> None:
    renamed = ToolSpec(name="odd", description="", input_schema={"type": "object", "properties": {"for": {}}})
    assert real_arguments(renamed, {"for_": 1, "class_": 2}) == {"for": 1, "class_": 2}
    lookup = SpecLookup()
    assert lookup.get((ODD_SPEC,), "odd") is ODD_SPEC
    assert lookup.get([renamed], "odd") is renamed
    assert lookup.get((), "odd") is None


@pytest_asyncio.fixture
async def session(make_reference_host: Callable[..., ReferenceHost]) -> AsyncIterator[tuple[ReferenceHost, Session]]:
    runtime = CodeRuntime(limits_with())
    seen: list[dict[str, Any]] = []

    async def record(arguments: Any, context: ToolContext) -> Any:
        seen.append(dict(arguments))
        return dict(arguments)

    definitions: list[ToolDefinition] = [
        tool("odd", record, input_schema=ODD_SCHEMA),
        tool("odd-tool", record, input_schema={"type": "object", "properties": {"if": {"type": "string"}}}),
        run_code_definition(runtime=runtime),
    ]
    host = make_reference_host(tools=definitions)
    try:
        yield host, await host.start_session(user_id="u", title="t")
    finally:
        await runtime.aclose()
        await host.aclose()


async def run(session: Session, code: str) -> ToolResult:
    return await session.call_tool("run_code", {"description": "test", "code": code})


@pytest.mark.asyncio
async def test_sdk_names_reach_the_tool_as_real_names(session: tuple[ReferenceHost, Session]) -> None:
    _host, live = session
    code = (
        "a = await tools.odd(odd_name_2=1, class_=2, odd_name=3, plain=4)\n"
        "b = await tools.odd(**{'odd-name': 5, 'class': 6})\n"
        "c = await tools['odd-tool'](if_='x')\n"
        "return [a, b, c]\n"
    )
    result = await run(live, code)
    assert result.ok, result
    assert result.value["value"] == [
        {"odd-name": 1, "class": 2, "odd_name": 3, "plain": 4},
        {"odd-name": 5, "class": 6},
        {"if": "x"},
    ]
    started = [event.data for event in live.log.events if event.type == "tool-started"]
    assert started[1]["arguments"] == {"odd-name": 1, "class": 2, "odd_name": 3, "plain": 4}


@pytest.mark.asyncio
async def test_unknown_and_conflicting_keywords_are_reported(session: tuple[ReferenceHost, Session]) -> None:
    _host, live = session
    code = (
        "caught = []\n"
        "for kwargs in ({'bogus': 1}, {'class_': 1, 'class': 2}):\n"
        "    try:\n"
        "        await tools.odd(**kwargs)\n"
        "    except ToolCallError as error:\n"
        "        caught.append([error.code, error.message])\n"
        "return caught\n"
    )
    result = await run(live, code)
    assert result.ok, result
    (unknown_code, unknown_text), (conflict_code, conflict_text) = result.value["value"]
    assert unknown_code == "invalid-arguments" and "bogus" in unknown_text  # the host's own validation
    assert conflict_code == "PTC-2007" and "'class'" in conflict_text and "class_" in conflict_text


@pytest.mark.asyncio
async def test_the_mapping_follows_the_spec_at_dispatch_time(session: tuple[ReferenceHost, Session]) -> None:
    host, live = session

    async def echo(arguments: Any, context: ToolContext) -> Any:
        return dict(arguments)

    async def swap(arguments: Any, context: ToolContext) -> Any:
        # Between two calls of one program the tool's schema changes: ``lambda`` becomes an argument.
        host.remove_tool("odd")
        schema = {"type": "object", "properties": {"lambda": {"type": "integer"}}, "additionalProperties": False}
        host.add_tool(tool("odd", echo, input_schema=schema))
        return None

    host.add_tool(tool("swap", swap))
    code = "await tools.swap()\nreturn await tools.odd(lambda_=7)\n"
    result = await run(live, code)
    assert result.ok, result
    assert result.value["value"] == {"lambda": 7}
