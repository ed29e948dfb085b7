"""``read_spill``: the model's (and programs') way to read the rest of a previewed result.

It reads the host's spill store and nothing else: no tool is re-run. One read
returns at most :data:`MAX_READ_CHARS` characters, so its own result stays
small; its results are never previewed again (ADR 0069). The store is read
in a thread, off the event loop.
"""

from __future__ import annotations

import asyncio
import functools

from hookspecs import Concurrency, JSONObject, JSONValue, ToolContext, ToolDefinition, ToolFailure, ToolSpec
from ptc_plus.errors import PtcError
from ptc_plus.i18n import message
from ptc_plus.preview.errors import ReadTooLarge, SpillUnavailable, SpillUnknown, SpillUnreadable

READ_TOOL_NAME = "read_spill"
SOURCE = "plugin:ptc_plus"
DEFAULT_READ_CHARS = 8000
"""Characters one read returns when it names no ``limit`` (about the default preview budget)."""
MAX_READ_CHARS = 32000
"""The most characters one read may return."""


def input_schema() -> JSONObject:
    return {
        "type": "object",
        "properties": {
            "handle": {"type": "string", "description": message("ptc.preview.schema.handle", "en")},
            "offset": {
                "type": "integer",
                "minimum": 0,
                "description": message("ptc.preview.schema.offset", "en"),
            },
            "limit": {
                "type": "integer",
                "minimum": 1,
                "description": message(
                    "ptc.preview.schema.limit", "en", default=DEFAULT_READ_CHARS, cap=MAX_READ_CHARS
                ),
            },
        },
        "required": ["handle"],
        "additionalProperties": False,
    }


@functools.cache
def read_spill_definition() -> ToolDefinition:
    """The ``read_spill(handle, offset=0, limit=8000)`` tool (one definition per process).

    Its value is ``{"handle", "offset", "text", "next_offset"}``: ``next_offset``
    is where the next read starts, ``None`` once ``text`` reaches the end.
    Failures are :class:`~hookspecs.ToolFailure` with a PTC-61xx code.
    """
    spec = ToolSpec(
        name=READ_TOOL_NAME,
        description=message("ptc.preview.tool.description", "en", cap=MAX_READ_CHARS),
        input_schema=input_schema(),
        concurrency=Concurrency.PARALLEL,
        source=SOURCE,
    )

    async def handler(arguments: JSONObject, context: ToolContext) -> JSONValue:
        try:
            # Off the event loop: the store reads a file (and may first index an old spill; ADR 0087).
            return await asyncio.to_thread(read, arguments, context)
        except PtcError as error:
            raise ToolFailure(error.code, error.message()) from None

    return ToolDefinition(spec=spec, handler=handler)


def read(arguments: JSONObject, context: ToolContext) -> JSONObject:
    store = context.services.spill_store
    if store is None:
        raise SpillUnavailable()
    handle = str(arguments["handle"])
    offset = int(arguments.get("offset") or 0)  # the host validated the schema
    raw_limit = arguments.get("limit")
    limit = DEFAULT_READ_CHARS if raw_limit is None else int(raw_limit)
    if limit > MAX_READ_CHARS:
        raise ReadTooLarge(limit=limit, cap=MAX_READ_CHARS)
    try:
        # One character more than asked tells whether anything follows, without a size query.
        text = store.read(handle, offset, limit + 1)
    except KeyError:
        raise SpillUnknown(handle=handle) from None
    except OSError as error:
        raise SpillUnreadable(handle=handle, detail=f"{type(error).__name__}: {error}") from None
    more = len(text) > limit
    text = text[:limit]
    return {"handle": handle, "offset": offset, "text": text, "next_offset": offset + len(text) if more else None}
