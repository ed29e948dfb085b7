"""``ptc-plus mcp-serve``: PTC Plus as an MCP server, the MCP client in the model's seat (ADR 0073).

Its modules are its face, imported one by one so that the MCP SDK loads only when serving (ADR 0105):

- :mod:`.serve` — the MCP wire (tools, prompts, the catalog as ``instructions``) over stdio;
- :mod:`.serve_session` — one client's session on the embedded host;
- :mod:`.serve_errors` — its typed errors.
"""
