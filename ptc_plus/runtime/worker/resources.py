"""The program's ``resources`` object: reading MCP resources.

``await resources.read(uri, server=None)`` returns ``{uri, server, contents,
text}`` and ``await resources.list(server)`` returns ``{server, resources,
templates}``. Both are nested calls of the plugin's ``read_mcp_resource`` and
``list_mcp_resources`` tools, so they pass the same guards as any tool call
(a server the plan keeps out is refused). When the session offers no such
tools (no MCP server with resources), they raise :class:`ToolCallError`
without sending anything. The object holds nothing but its two methods and
cannot be changed.
"""

from __future__ import annotations

from typing import Any

from . import messages
from .namespace import Invoke, ToolCallError

READ_TOOL = "read_mcp_resource"
LIST_TOOL = "list_mcp_resources"
"""The plugin's tools (``ptc_plus.adapters.mcp``; this package imports only the standard library)."""

UNAVAILABLE = "PTC-7008"


def build_resources(invoke: Invoke, names: frozenset[str]) -> Any:
    """A fresh ``resources`` object over the program's tool ``names``."""

    async def read(uri: Any, server: Any = None) -> Any:
        if READ_TOOL not in names:
            raise ToolCallError(READ_TOOL, UNAVAILABLE, messages.text("runtime.worker.resources_unavailable"))
        arguments: dict[str, Any] = {"uri": uri}
        if server is not None:
            arguments["server"] = server
        return await invoke(READ_TOOL, arguments)

    async def list_(server: Any) -> Any:
        if LIST_TOOL not in names:
            raise ToolCallError(LIST_TOOL, UNAVAILABLE, messages.text("runtime.worker.resources_unavailable"))
        return await invoke(LIST_TOOL, {"server": server})

    read.__qualname__ = "resources.read"
    list_.__name__ = "list"
    list_.__qualname__ = "resources.list"
    methods = {"read": read, "list": list_}

    class Resources:
        __slots__ = ()

        def __getattr__(self, name: str) -> Any:
            if name in methods:
                return methods[name]
            raise AttributeError(messages.text("runtime.worker.resources_no_attribute", name=name))

        def __setattr__(self, name: str, value: object) -> None:
            raise AttributeError(messages.text("runtime.worker.resources_read_only"))

        def __delattr__(self, name: str) -> None:
            raise AttributeError(messages.text("runtime.worker.resources_read_only"))

        def __dir__(self) -> list[str]:
            return ["list", "read"]

        def __repr__(self) -> str:
            return "<resources: list, read>"

    Resources.__name__ = Resources.__qualname__ = "resources"
    return Resources()
