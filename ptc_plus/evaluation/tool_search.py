"""The native + tool search style: deferred schemas, loaded into the session by a ``tool_search`` tool.

The anchor's pattern (Anthropic's tool search): the model is offered only
``tool_search`` and the tools it has loaded so far in this session; a search
ranks every tool of the agent's view with the project's own search (the one
``capabilities.find`` answers programs with, so both styles find equally well)
and loads the best :data:`MAX_RESULTS`. A loaded tool's schema is in every later
request's tool list — as the anchor expands a tool reference into the tool's
definition — so the search's result names the tools and says what they do
without repeating their schemas (which would bill them twice). Loaded tools
persist for the session; a child session loads its own.
"""

from __future__ import annotations

from collections.abc import Sequence

from hookspecs import (
    AgentRef,
    HostServices,
    JSONObject,
    JSONValue,
    PromptContext,
    ToolContext,
    ToolDefinition,
    ToolSpec,
    hookimpl,
)
from hookspecs.services import tool
from ptc_plus.capabilities import CatalogSnapshot, build_catalog, build_snapshot, discovery
from ptc_plus.evaluation.driver import TOOL_SEARCH

MAX_RESULTS = 5
"""Tools one search loads at most (the anchor returns a handful of references per search)."""

SEARCH_SCHEMA: JSONObject = {
    "type": "object",
    "properties": {"query": {"type": "string", "description": "Words describing the tool you need."}},
    "required": ["query"],
    "additionalProperties": False,
}


class ToolSearchPlugin:
    """A host plugin (pluggy hook implementations): ``tool_search`` plus the tools each session loaded."""

    def __init__(self) -> None:
        self._loaded: dict[str, list[str]] = {}
        self._snapshot: tuple[tuple[str, ...], CatalogSnapshot] | None = None
        self._definition = tool(TOOL_SEARCH, description=self.description(), input_schema=SEARCH_SCHEMA)(self._search)

    @staticmethod
    def description() -> str:
        return (
            "Search the available tools by what they do and load the best matches: "
            f"up to {MAX_RESULTS} tools become callable from your next step on."
        )

    def loaded(self, session_id: str) -> list[str]:
        """Names ``session_id`` loaded so far, in load order."""
        return list(self._loaded.get(session_id, ()))

    @hookimpl
    def agent_host_tools(self, agent: AgentRef, services: HostServices) -> Sequence[ToolDefinition]:
        return [self._definition]

    @hookimpl
    def agent_host_model_tools(self, context: PromptContext, services: HostServices) -> Sequence[str] | None:
        return [TOOL_SEARCH, *self._loaded.get(context.agent.session_id, ())]

    def _ranked(self, specs: Sequence[ToolSpec], query: str) -> list[str]:
        """The names of the best matches, by the same search the in-program discovery uses (a fair anchor)."""
        searchable = tuple(s for s in specs if s.name != TOOL_SEARCH)
        names = tuple(s.name for s in searchable)
        if self._snapshot is None or self._snapshot[0] != names:
            # No disk cache: a run's catalog is made once and must not depend on the user's cache.
            catalog = build_catalog(tools=searchable, cache=None)
            self._snapshot = (names, build_snapshot(catalog, cache=None))
        snapshot = self._snapshot[1]
        found = discovery.find(snapshot, query, limit=MAX_RESULTS)
        by_identity = {s.identity: s.name for s in searchable}
        return [by_identity[m["identity"]] for m in found["matches"] if m["identity"] in by_identity]

    async def _search(self, arguments: JSONObject, context: ToolContext) -> JSONValue:
        agent = context.call.caller
        specs = list(context.services.tool_view(agent))
        found = self._ranked(specs, str(arguments["query"]))
        loaded = self._loaded.setdefault(agent.session_id, [])
        loaded.extend(name for name in found if name not in loaded)
        described = {s.name: s.description for s in specs}
        return {"loaded": [{"name": name, "description": described[name]} for name in found]}
