"""Adapters that bring other programs' capabilities in: MCP servers as capability sources (:mod:`.mcp`), below the
session. The front doors that take PTC Plus out to other programs (mcp-serve, llm) are :mod:`ptc_plus.doors`."""
