"""MCP servers as capability sources (ADR 0072).

- :mod:`.hub` — one background thread and loop owning every MCP client session of the process;
- :mod:`.launcher` — servers start under ``PR_SET_PDEATHSIG``: they never outlive their host;
- :mod:`.tools` — a server's tools as ``mcp:<server>/<tool>`` definitions;
- :mod:`.resources` — one ``mcp-resources:<server>`` source per server and the tools programs read them with;
- :mod:`.sources` — one controller's view: which servers each session uses;
- :mod:`.snapshots` — each server definition's last ``tools/list``, which plans use instead of a start.
"""

from __future__ import annotations

from ptc_plus.adapters.mcp.errors import SnapshotUnreadable
from ptc_plus.adapters.mcp.hub import HUB, Hub, ServerKey
from ptc_plus.adapters.mcp.resources import LIST_TOOL, READ_TOOL, resource_tools
from ptc_plus.adapters.mcp.resources import TOOLS as RESOURCE_TOOLS
from ptc_plus.adapters.mcp.snapshots import SnapshotStore, ToolsSnapshot, age_text, default_store
from ptc_plus.adapters.mcp.sources import McpSources, check_servers, server_key

__all__ = [
    "HUB",
    "LIST_TOOL",
    "READ_TOOL",
    "RESOURCE_TOOLS",
    "Hub",
    "McpSources",
    "ServerKey",
    "SnapshotStore",
    "SnapshotUnreadable",
    "ToolsSnapshot",
    "age_text",
    "check_servers",
    "default_store",
    "resource_tools",
    "server_key",
]
