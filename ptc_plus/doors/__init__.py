"""The front doors: how PTC Plus runs where there is no host of ours (ADR 0121).

:func:`embedded` is the door every front door goes through: it builds the
reference host with the plugin loaded. Above it sit the two front doors that
are adapters for another program: :mod:`ptc_plus.doors.mcp` (``ptc-plus
mcp-serve``, the plugin as an MCP server) and :mod:`ptc_plus.doors.llm` (the
plugin of Simon Willison's ``llm``). The MCP servers PTC Plus *uses* as
sources are not doors: they live in :mod:`ptc_plus.adapters.mcp`, below the
session. Both doors show their client the same pair of values (:mod:`ptc_plus.doors.seat`): a
:class:`SeatTool` and a call's :class:`SeatAnswer`.
"""

from __future__ import annotations

from ptc_plus.doors.embedded import Scratch, embedded, login_name
from ptc_plus.doors.seat import SeatAnswer, SeatTool

__all__ = ["Scratch", "SeatAnswer", "SeatTool", "embedded", "login_name"]
