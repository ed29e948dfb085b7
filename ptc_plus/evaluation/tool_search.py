"""The native + tool search style: deferred schemas, loaded into the session by a ``tool_search`` tool.

The anchor's pattern (Anthropic's tool search): the model is offered only
``tool_search`` and the tools it has loaded so far in this session; a search
ranks every tool of the agent's view with the project's own search (the one
``capabilities.find`` answers programs with, so both styles find equally well)
and loads the best :data:`MAX_RESULTS`. Loaded tools persist for the session; a
child session loads its own.

Where a loaded definition sits decides what the prompt cache keeps (ADR 0094).
The anchor marks deferred tools ``defer_loading`` (never rendered) and expands
each tool reference a search returns into the tool's definition *at that
point of the conversation*, so the tools list before the history never changes
and the cached prefix survives a load. Here the search's result carries the
newly loaded tools' definitions (name, description, input schema): the
reference, expanded. The reference host dispatches only tools its request
offers, so the plugin offers the loaded tools too; :func:`anchor_request` is
the request as the anchor's wire carries it — the loaded tools dropped from
the list, their definitions in the search results — and that is what the
evaluation logs and meters. ``always`` names tools loaded from the start (the
mature variant's most used tools, :func:`most_used_tools`): in the list,
never deferred.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs
import orjson

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
from hookspecs.reference import ModelRequest
from hookspecs.services import tool
from ptc_plus import discovery
from ptc_plus.capabilities import build_catalog
from ptc_plus.discovery import CatalogSnapshot, build_snapshot
from ptc_plus.evaluation.driver import TOOL_SEARCH
from ptc_plus.statistics import StatisticsStore

ALWAYS_LOADED = 5
"""How many of the most used tools the mature variant keeps loaded (the anchor advises three to five)."""

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

    def __init__(self, *, always: Sequence[str] = ()) -> None:
        self.always = tuple(always)
        self._loaded: dict[str, list[str]] = {}
        self._snapshot: tuple[tuple[str, ...], CatalogSnapshot] | None = None
        self._definition = tool(TOOL_SEARCH, description=self.description(), input_schema=SEARCH_SCHEMA)(self._search)

    @staticmethod
    def description() -> str:
        return (
            "Search the available tools by what they do and load the best matches: "
            f"up to {MAX_RESULTS} tools become callable from your next step on; "
            "the result holds the definitions of the tools it loaded."
        )

    def loaded(self, session_id: str) -> list[str]:
        """Names ``session_id`` loaded so far, in load order."""
        return list(self._loaded.get(session_id, ()))

    @hookimpl
    def agent_host_tools(self, agent: AgentRef, services: HostServices) -> Sequence[ToolDefinition]:
        return [self._definition]

    @hookimpl
    def agent_host_model_tools(self, context: PromptContext, services: HostServices) -> Sequence[str] | None:
        return [TOOL_SEARCH, *self.always, *self._loaded.get(context.agent.session_id, ())]

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
        # A tool already loaded (always, or by an earlier search) is named only: its definition is already in
        # the request (the list, or an earlier search's result), and repeating it would bill it twice.
        known = {*self.always, *loaded}
        fresh = [name for name in found if name not in known]
        loaded.extend(fresh)
        by_name = {s.name: s for s in specs}
        return {
            "loaded": [definition(by_name[name]) for name in fresh],
            "already_loaded": [name for name in found if name in known],
        }


def definition(spec: ToolSpec) -> JSONObject:
    """A loaded tool's definition as a search result carries it (the anchor's expanded tool reference)."""
    return {"name": spec.name, "description": spec.description, "input_schema": spec.input_schema}


def search_results(request: ModelRequest) -> list[JSONObject]:
    """The parsed results of every ``tool_search`` call in ``request``'s history, in order."""
    searches = {
        str(call.get("id"))
        for message in request.messages
        if message.get("role") == "assistant"
        for call in message.get("tool_calls") or ()
        if call.get("name") == TOOL_SEARCH
    }
    found: list[JSONObject] = []
    for message in request.messages:
        if message.get("role") == "tool" and message.get("tool_call_id") in searches:
            try:
                parsed = orjson.loads(str(message.get("content") or ""))
            except orjson.JSONDecodeError:
                continue
            if isinstance(parsed, dict):
                found.append(parsed)
    return found


def loaded_by_search(request: ModelRequest) -> dict[str, JSONObject]:
    """Per tool name, the definition a search of ``request``'s history loaded (in the conversation)."""
    found: dict[str, JSONObject] = {}
    for result in search_results(request):
        for item in result.get("loaded") or ():
            if isinstance(item, dict) and isinstance(item.get("name"), str):
                found.setdefault(item["name"], item)
    return found


def anchor_request(request: ModelRequest) -> ModelRequest:
    """``request`` as the anchor's wire carries it: tools a search loaded are not in the list (they are
    ``defer_loading``), their definitions sit in the search results of the history."""
    deferred = loaded_by_search(request)
    if not deferred:
        return request
    return attrs.evolve(request, tools=tuple(spec for spec in request.tools if spec.name not in deferred))


def most_used_tools(statistics: Path, limit: int = ALWAYS_LOADED) -> tuple[str, ...]:
    """The names of the ``limit`` tools used by the most families of ``statistics`` (ties by name), the same
    store PTC Plus mature plans from; host tools only (identity ``host:<name>``)."""
    view = StatisticsStore(statistics).read()
    uses: dict[str, int] = {}
    for record in view.payload.capabilities:
        source, _, name = record.identity.partition(":")
        if source != "host" or not name:
            continue
        used: Any = sum(len(revision.used) for revision in record.revisions)
        if used:
            uses[name] = uses.get(name, 0) + int(used)
    ranked = sorted(uses, key=lambda name: (-uses[name], name))
    return tuple(ranked[:limit])
