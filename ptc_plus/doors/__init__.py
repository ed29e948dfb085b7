"""The front doors: how PTC Plus runs where there is no host of ours (ADR 0121).

:func:`embedded` is the door every front door goes through: it builds the
reference host with the plugin loaded. Above it sit the two front doors that
are adapters for another program: :mod:`ptc_plus.doors.mcp` (``ptc-plus
mcp-serve``, the plugin as an MCP server) and :mod:`ptc_plus.doors.llm` (the
plugin of Simon Willison's ``llm``). The MCP servers PTC Plus *uses* as
sources are not doors: they live in :mod:`ptc_plus.adapters.mcp`, below the
session.
"""

from __future__ import annotations

from ptc_plus.doors.embedded import Scratch, embedded, login_name

__all__ = ["Scratch", "embedded", "login_name"]
