"""Adapters between PTC Plus and other protocols: MCP servers as capability sources (:mod:`.mcp`)."""
