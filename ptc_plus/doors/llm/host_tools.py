"""llm's registered tools as host tools of the embedded reference host, and llm's callbacks as its guard.

A nested call a program makes reaches the real llm implementation through the
host (validation, the guard, the plan, the ordered scheduler); a sync
implementation runs in a worker thread, so parallel calls overlap. llm's
``before_call`` (``--ta``) is the host's approver: it is asked for every
nested call (the outer ``run_code`` call was approved by llm itself), and a
``CancelToolCall`` refuses the call, which the program sees as
``ToolCallError``. llm's ``after_call`` (``--td``) sees each nested call and
its result as it settles (ADR 0074).
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import llm

from hookspecs import JSONObject, JSONValue, Refusal, ToolCall, ToolContext, ToolDefinition, ToolFailure, ToolSpec
from ptc_plus.doors.llm.chain_context import ChainContext
from ptc_plus.doors.llm.errors import NestedCallCancelled
from ptc_plus.i18n import message

PLUGIN_TOOLS = frozenset({"run_code", "read_spill"})
"""The tools the plugin registers in llm; never host tools of its own sessions."""
TOOL_SET = "ptc_plus.doors.llm.host_tools:tool_set"
"""llm's tools as a ``--tools`` factory, the default of the mounted ``llm capabilities plan``."""
NESTED_MARK = ":ptc:"
"""Nested call ids are ``<outer-call-id>:ptc:<n>`` (CONTEXT: *Nested call*)."""
FAILED = "llm-tool-failed"


class Gathering:
    """Set while the plugin asks llm for the other tools: its own hook, called again, then registers nothing."""

    active = False

    @classmethod
    @contextlib.contextmanager
    def inside(cls) -> Iterator[None]:
        cls.active, before = True, cls.active
        try:
            yield
        finally:
            cls.active = before


def other_tools() -> dict[str, llm.Tool]:
    """llm's registered function tools other than the plugin's."""
    with Gathering.inside():
        return llm_function_tools(llm.get_tools(), PLUGIN_TOOLS)


def tool_set(workspace: Path) -> list[ToolDefinition]:
    """llm's other tools as host tools (a ``--tools`` factory: :data:`TOOL_SET`)."""
    return definitions(other_tools(), ChainContext())


def llm_function_tools(registered: Mapping[str, Any], skip: frozenset[str]) -> dict[str, llm.Tool]:
    """The registered function tools with an implementation, by name; toolboxes need configuring and are left out."""
    return {
        name: tool
        for name, tool in registered.items()
        if isinstance(tool, llm.Tool) and tool.implementation is not None and name not in skip
    }


def definitions(tools: Mapping[str, llm.Tool], chain: ChainContext) -> list[ToolDefinition]:
    """One host tool per llm tool, in llm's order, whose body calls the llm implementation."""
    return [_definition(tool, chain) for tool in tools.values()]


def _definition(tool: llm.Tool, chain: ChainContext) -> ToolDefinition:
    spec = ToolSpec(
        name=tool.name,
        description=tool.description or "",
        input_schema=tool.input_schema or {"type": "object"},
        source="host",
    )

    async def body(arguments: JSONObject, context: ToolContext) -> JSONValue:
        call = llm.ToolCall(name=tool.name, arguments=dict(arguments), tool_call_id=context.call.call_id)
        output, exception = await _invoke(tool, call)
        if chain.after_call is not None:
            shown = llm.ToolResult(
                name=tool.name, output=_text(output), tool_call_id=call.tool_call_id, exception=exception
            )
            _discard(chain.after_call(tool, call, shown))
        if exception is not None:
            raise ToolFailure(FAILED, f"{type(exception).__name__}: {exception}")
        return _value(output)

    return ToolDefinition(spec=spec, handler=body)


async def _invoke(tool: llm.Tool, call: llm.ToolCall) -> tuple[Any, Exception | None]:
    """What the implementation returned (a ``ToolOutput``'s output), or the exception it raised."""
    implementation = tool.implementation
    assert implementation is not None
    arguments = dict(call.arguments)
    if "llm_tool_call" in inspect.signature(implementation).parameters:
        arguments["llm_tool_call"] = call
    try:
        if inspect.iscoroutinefunction(implementation):
            result = await implementation(**arguments)
        else:
            result = await asyncio.to_thread(implementation, **arguments)
    except Exception as error:  # a tool's failure is its result, as in llm
        return f"Error: {error}", error
    return (result.output if isinstance(result, llm.ToolOutput) else result), None


def _text(result: Any) -> str:
    """The output as llm logs it: text as is, anything else as JSON."""
    return result if isinstance(result, str) else json.dumps(result, default=repr)


def _value(result: Any) -> JSONValue:
    """What the program gets: text as is, anything else as the JSON llm would send the model."""
    if isinstance(result, str):
        return result
    value: JSONValue = json.loads(_text(result))
    return value


def approver(chain: ChainContext, tools: Mapping[str, llm.Tool]) -> Callable[[ToolCall, ToolSpec], Refusal | None]:
    """The host's approval step: llm's ``before_call`` for nested calls of an llm tool."""

    def approve(call: ToolCall, spec: ToolSpec) -> Refusal | None:
        tool = tools.get(spec.name)
        if chain.before_call is None or tool is None or NESTED_MARK not in call.call_id:
            return None
        asked = llm.ToolCall(name=spec.name, arguments=dict(call.arguments), tool_call_id=call.call_id)
        try:
            _settle(chain.before_call(tool, asked))
        except llm.CancelToolCall as cancelled:
            error = NestedCallCancelled(tool=spec.name, reason=str(cancelled))
            return Refusal(code=error.code, reason=error.message("en"))
        return None

    return approve


def _discard(result: object) -> None:
    """An async ``after_call`` cannot be awaited on the host's loop: it is closed, unrun (ADR 0074)."""
    close = getattr(result, "close", None) if inspect.isawaitable(result) else None
    if callable(close):
        close()


def _settle(result: object) -> None:
    """A sync callback's result; an async callback (llm's async chains) cannot be awaited from the host's guard."""
    if inspect.isawaitable(result):
        close = getattr(result, "close", None)
        if callable(close):
            close()
        raise llm.CancelToolCall(message("ptc.llm.async-callback", "en"))
