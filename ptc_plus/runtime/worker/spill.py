"""The program's ``spill`` object: reading the rest of a previewed result.

``await spill.read(handle, offset=0, limit=None)`` returns up to ``limit``
characters (``None``: the read tool's default) of the text kept under
``handle``, ``""`` past the end. It is a nested call of the host's
``read_spill`` tool, so it passes the same guards and re-runs nothing. When
the session offers no such tool (the host has no spill store), it raises
:class:`ToolCallError` saying so, without sending anything. The object holds
nothing but ``read`` and cannot be changed.
"""

from __future__ import annotations

from typing import Any

from . import messages
from .namespace import Invoke, ToolCallError

READ_TOOL = "read_spill"
"""The host's read tool (``ptc_plus.preview.READ_TOOL_NAME``; this package imports only the standard library)."""

UNAVAILABLE = "PTC-6103"


def build_spill(invoke: Invoke, available: bool) -> Any:
    """A fresh ``spill`` object; ``available``: the read tool is in the program's tools."""

    async def read(handle: Any, offset: Any = 0, limit: Any = None) -> Any:
        if not available:
            raise ToolCallError(READ_TOOL, UNAVAILABLE, messages.text("runtime.worker.spill_unavailable"))
        arguments: dict[str, Any] = {"handle": handle, "offset": offset}
        if limit is not None:
            arguments["limit"] = limit
        reply = await invoke(READ_TOOL, arguments)
        return reply["text"] if isinstance(reply, dict) else reply

    read.__qualname__ = "spill.read"

    class Spill:
        __slots__ = ()

        def __getattr__(self, name: str) -> Any:
            if name == "read":
                return read
            raise AttributeError(messages.text("runtime.worker.spill_no_attribute", name=name))

        def __setattr__(self, name: str, value: object) -> None:
            raise AttributeError(messages.text("runtime.worker.spill_read_only"))

        def __delattr__(self, name: str) -> None:
            raise AttributeError(messages.text("runtime.worker.spill_read_only"))

        def __dir__(self) -> list[str]:
            return ["read"]

        def __repr__(self) -> str:
            return "<spill: read>"

    Spill.__name__ = Spill.__qualname__ = "spill"
    return Spill()
