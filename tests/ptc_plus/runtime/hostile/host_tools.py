"""Host tools the hostile programs call besides the demo tools: slow ones and a large reply.

``nap`` sleeps and notices cancellation (it records it); ``stubborn_nap``
ignores cancellation until its time is up or the test releases it; ``blob``
returns a string of the requested size; ``echo`` returns its ``text``;
``tally`` sums a list of integers (a schema whose wrong items are many errors). :func:`factory` is the
``--tools module:factory`` entry for ``ptc-plus exec`` (the demo tools plus
these).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import attrs

from hookspecs import Concurrency, ToolContext, ToolDefinition, ToolSpec
from hookspecs.reference.demo_tools import demo_tool_definitions


@attrs.define
class ToolLog:
    """What the slow tools saw, for assertions (one per harness)."""

    started: int = 0
    cancelled: int = 0
    finished: int = 0
    release: asyncio.Event = attrs.Factory(asyncio.Event)


def _seconds_schema() -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"seconds": {"type": "number", "minimum": 0, "maximum": 600}},
        "required": ["seconds"],
        "additionalProperties": False,
    }


def hostile_tools(log: ToolLog) -> list[ToolDefinition]:
    async def nap(arguments: Any, context: ToolContext) -> Any:
        log.started += 1
        sleeper = asyncio.ensure_future(asyncio.sleep(float(arguments["seconds"])))
        cancelled = asyncio.ensure_future(context.cancelled.wait())
        try:
            await asyncio.wait([sleeper, cancelled], return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            log.cancelled += 1
            raise
        finally:
            sleeper.cancel()
            cancelled.cancel()
        if context.cancelled.is_set():
            log.cancelled += 1
            return "cancelled"
        log.finished += 1
        return "slept"

    async def stubborn_nap(arguments: Any, context: ToolContext) -> Any:
        log.started += 1
        loop = asyncio.get_running_loop()
        end = loop.time() + float(arguments["seconds"])
        while loop.time() < end and not log.release.is_set():
            try:
                await asyncio.wait_for(asyncio.shield(log.release.wait()), max(0.0, end - loop.time()))
            except asyncio.CancelledError:
                log.cancelled += 1  # noticed, and ignored on purpose
            except TimeoutError:
                break
        log.finished += 1
        return "slept anyway"

    async def blob(arguments: Any, context: ToolContext) -> Any:
        return "x" * int(arguments["bytes"])

    async def echo(arguments: Any, context: ToolContext) -> Any:
        return arguments["text"]

    async def tally(arguments: Any, context: ToolContext) -> Any:
        return sum(arguments["numbers"])

    echo_schema = {
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
        "additionalProperties": False,
    }
    tally_schema = {
        "type": "object",
        "properties": {"numbers": {"type": "array", "items": {"type": "integer"}}},
        "required": ["numbers"],
        "additionalProperties": False,
    }
    blob_schema = {
        "type": "object",
        "properties": {"bytes": {"type": "integer", "minimum": 0, "maximum": 1 << 30}},
        "required": ["bytes"],
        "additionalProperties": False,
    }
    return [
        ToolDefinition(
            spec=ToolSpec(name="nap", description="Sleep, stopping when cancelled.", input_schema=_seconds_schema()),
            handler=nap,
        ),
        ToolDefinition(
            spec=ToolSpec(
                name="stubborn_nap",
                description="Sleep and ignore cancellation.",
                input_schema=_seconds_schema(),
                concurrency=Concurrency.PARALLEL,
            ),
            handler=stubborn_nap,
        ),
        ToolDefinition(
            spec=ToolSpec(name="blob", description="A string of the given size.", input_schema=blob_schema),
            handler=blob,
        ),
        ToolDefinition(spec=ToolSpec(name="echo", description="Its text.", input_schema=echo_schema), handler=echo),
        ToolDefinition(
            spec=ToolSpec(name="tally", description="The sum of the numbers.", input_schema=tally_schema),
            handler=tally,
        ),
    ]


def factory(workspace: Path) -> list[ToolDefinition]:
    """``ptc-plus exec --tools tests.runtime.hostile.host_tools:factory``: demo tools plus the hostile ones."""
    return [*demo_tool_definitions(workspace), *hostile_tools(ToolLog())]
