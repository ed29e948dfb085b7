"""One controller's MCP sources: which servers each session uses, their tools and resource sources.

:meth:`McpSources.open` (session start, resume, refresh) holds the session's
servers in the hub. It does not start them: the plan is computed over each
server's last ``tools/list`` snapshot (:mod:`.snapshots`), and a server starts
at its first request — a program's call. Only a server with no usable snapshot,
or every server when ``refresh`` is asked, is started to list its tools; a
server whose unit ``mcp:<server>`` is ``off`` is never started (ADR 0097). Until :meth:`McpSources.settle` has seen the
host's other tools for the session, none of its MCP tools is contributed:
a tool named like one the session already has (a host tool, an earlier
server's tool, the plugin's own) is left out with a PTC-7006 diagnostic
rather than breaking the host's view (ADR 0072). Definitions follow each
server's current listing (``tools/list_changed``); the frozen plan keeps
late tools out until a refresh (ADR 0056).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from pathlib import Path

import attrs

from hookspecs import ToolDefinition, ToolSpec
from ptc_plus.adapters.mcp.errors import NameTaken, ServerUnavailable, SnapshotUnreadable
from ptc_plus.adapters.mcp.hub import HUB, Hub, Listing, Server, ServerKey
from ptc_plus.adapters.mcp.resources import TOOLS as RESOURCE_TOOLS
from ptc_plus.adapters.mcp.snapshots import ToolsSnapshot, default_store
from ptc_plus.adapters.mcp.tools import MCP_SOURCE, described, source_of, tool_definition, tool_spec
from ptc_plus.capabilities import ResourceSource
from ptc_plus.config import Disclosure, LoadedConfig, McpServer, mcp_servers, server_cwd
from ptc_plus.errors import PtcError
from ptc_plus.i18n import message


def server_key(name: str, server: McpServer, workspace: Path, *, from_workspace: bool) -> ServerKey:
    """The definition that identifies a running server; ``cwd`` resolved as :func:`.server_cwd` says."""
    return ServerKey(
        name=name,
        command=server.command,
        args=tuple(server.args),
        env=tuple(sorted(server.env.items())),
        cwd=str(server_cwd(server, workspace, from_workspace=from_workspace)),
        timeout_s=server.timeout_s,
        start_timeout_s=server.start_timeout_s,
    )


@attrs.frozen(kw_only=True)
class Opened:
    """One session's servers (by name, in name order) and what their opening found."""

    servers: Mapping[str, Server]
    diagnostics: tuple[str, ...] = ()
    taken: frozenset[str] | None = None
    """Tool names of other sources at settlement (``None``: not settled, nothing contributed yet)."""
    provenance: Mapping[str, ToolsSnapshot] = attrs.field(factory=dict)
    """By server: the ``tools/list`` snapshot the session's tools of it came from (listed live: absent)."""


class McpSources:
    """The MCP side of one controller; the hub it uses is shared by the whole process."""

    def __init__(self, hub: Hub = HUB) -> None:
        self._hub = hub
        self._sessions: dict[str, Opened] = {}
        self._defined: dict[tuple[ServerKey, int, int], tuple[ToolDefinition, ...]] = {}

    def open(
        self,
        session_id: str,
        loaded: LoadedConfig,
        workspace: Path,
        progress: Callable[[str], None] | None = None,
        only: Collection[str] | None = None,
        *,
        refresh: bool = False,
    ) -> None:
        """Hold the usable servers of ``loaded`` (consented, enabled) for the session; start those that must list.

        A server's tools come from its live listing in this process, else its snapshot; one with neither
        (or an unreadable snapshot: a diagnostic) is started now, and with ``refresh`` every server is.
        A server whose unit is ``off`` is never started (its snapshot, if any, still names its tools for
        the plan, which keeps them off). Refused servers and servers that did not start become the
        session's diagnostics. ``progress`` (a command's stderr) is told of each server about to be
        waited for: a hung one is no silent pause. ``only`` (``exec --tools mcp:NAME``) keeps the other
        servers out, refused ones included.
        """
        chosen = mcp_servers(loaded, workspace)
        if only is not None:
            chosen = attrs.evolve(
                chosen,
                usable={n: s for n, s in chosen.usable.items() if n in only},
                refused=tuple(r for r in chosen.refused if r.name in only),
            )
        servers = chosen.usable
        held = {
            name: self._hub.hold(
                self, server_key(name, servers[name], workspace, from_workspace=name in chosen.workspace_servers)
            )
            for name in sorted(servers)
        }
        diagnostics: list[str] = [refused.message() for refused in chosen.refused]
        provenance: dict[str, ToolsSnapshot] = {}
        starting: list[Server] = []
        store = default_store()
        for name, server in held.items():
            off = loaded.config.disclosure_of(source_of(name)) is Disclosure.OFF
            if refresh and not off:
                starting.append(server)
                continue
            if server.listing is not None:
                continue  # started in this process already: its live listing is newer than any snapshot
            try:
                server.snapshot = store.load(server.key.digest(), name)
            except SnapshotUnreadable as unreadable:
                diagnostics.append(unreadable.message())
                server.snapshot = None
            if server.snapshot is not None:
                provenance[name] = server.snapshot
            elif not off:
                starting.append(server)
        if starting:
            _announce(starting, progress)
            failures = self._hub.wait(_start_all(starting))
            diagnostics += [failure.message() for failure in failures if failure is not None]
        self._sessions[session_id] = Opened(servers=held, diagnostics=tuple(diagnostics), provenance=provenance)

    def provenance(self, session_id: str) -> dict[str, ToolsSnapshot]:
        """By server name: which snapshot the session's tools of it came from (servers listed live: absent)."""
        opened = self._sessions.get(session_id)
        return dict(opened.provenance) if opened is not None else {}

    def settle(self, session_id: str, view: Sequence[ToolSpec]) -> list[ToolSpec]:
        """``view`` (the host's tools for the session) with the session's MCP tools added.

        The first call records the names the session's other sources use; MCP
        tools with one of those names (or an earlier server's) stay out.
        """
        opened = self._sessions.get(session_id)
        if opened is None:
            return list(view)
        if opened.taken is None:
            others = frozenset(s.name for s in view if not s.source.startswith(MCP_SOURCE + ":"))
            opened = attrs.evolve(opened, taken=others)
            self._sessions[session_id] = opened
        present = {s.identity for s in view}
        return [*view, *(d.spec for d in self.tools(session_id) if d.spec.identity not in present)]

    def diagnostics(self, session_id: str) -> tuple[str, ...]:
        """Servers that did not start, and tools left out for their names."""
        opened = self._sessions.get(session_id)
        if opened is None:
            return ()
        return (*opened.diagnostics, *self._collisions(opened)[1])

    def tools(self, session_id: str) -> list[ToolDefinition]:
        """The session's MCP tools as its servers list them now (none before :meth:`settle`)."""
        opened = self._sessions.get(session_id)
        if opened is None or opened.taken is None:
            return []
        return self._collisions(opened)[0]

    def _collisions(self, opened: Opened) -> tuple[list[ToolDefinition], list[str]]:
        kept: list[ToolDefinition] = []
        left_out: list[str] = []
        used = set(opened.taken or ()) | set(RESOURCE_TOOLS)
        for name, server in opened.servers.items():
            for definition in self._definitions(name, server):
                tool = definition.spec.name
                if tool in used:
                    left_out.append(NameTaken(tool=definition.spec.identity, name=tool).message())
                    continue
                used.add(tool)
                kept.append(definition)
        return kept, left_out

    def _definitions(self, name: str, server: Server) -> tuple[ToolDefinition, ...]:
        listing = server.known
        if listing is None:
            return ()
        # A snapshot's listing (generation 0) is cached by when it was taken: a newer snapshot read later is another.
        taken = server.snapshot.taken_at if server.snapshot is not None and listing.generation == 0 else 0.0
        stamp = (listing.generation, int(taken * 1_000_000))
        cached = self._defined.get((server.key, *stamp))
        if cached is None:
            cached = tuple(
                tool_definition(server, tool_spec(name, tool, listing.instructions)) for tool in listing.tools
            )
            self._defined[(server.key, *stamp)] = cached
        return cached

    def resource_servers(self, session_id: str) -> dict[str, Server]:
        """The session's servers that declared resources."""
        opened = self._sessions.get(session_id)
        if opened is None:
            return {}
        return {n: s for n, s in opened.servers.items() if (known := s.known) is not None and known.resources}

    def resource_sources(self, session_id: str) -> list[ResourceSource]:
        """One ``mcp-resources:<server>`` source per server declaring resources (nothing listed remotely)."""
        return [
            ResourceSource(server=name, description=_resource_description(name, server.known))
            for name, server in self.resource_servers(session_id).items()
        ]

    async def aclose(self) -> None:
        """Stop the servers no other controller holds (their processes end)."""
        self._sessions.clear()
        self._defined.clear()
        await self._hub.arelease(self)

    def close(self) -> None:
        """:meth:`aclose` for a caller with no event loop (a CLI command that listed the servers once)."""
        self._sessions.clear()
        self._defined.clear()
        self._hub.release(self)


def check_servers(
    loaded: LoadedConfig, workspace: Path, progress: Callable[[str], None] | None = None, hub: Hub = HUB
) -> dict[str, PtcError | None]:
    """Start each usable server of ``workspace`` once (then stop it): by name, ``None`` or why it did not start.

    A server that started lists its tools, which refreshes its snapshot (ADR 0097)."""
    chosen = mcp_servers(loaded, workspace)
    usable = chosen.usable
    holder = object()
    held = {
        name: hub.hold(
            holder, server_key(name, usable[name], workspace, from_workspace=name in chosen.workspace_servers)
        )
        for name in sorted(usable)
    }
    try:
        _announce(held.values(), progress)
        failures = hub.wait(_start_all(list(held.values()))) if held else []
        return dict(zip(held, failures, strict=True))
    finally:
        hub.release(holder)


def _announce(servers: Iterable[Server], progress: Callable[[str], None] | None) -> None:
    for server in servers:
        if progress is not None and server.listing is None:
            progress(message("ptc.mcp.starting", server=server.key.name, seconds=server.key.start_timeout_s))


def _resource_description(name: str, listing: Listing | None) -> str:
    instructions = listing.instructions if listing is not None else ""
    return described("", name, instructions)


async def _start_all(servers: list[Server]) -> list[PtcError | None]:
    async def start(server: Server) -> PtcError | None:
        try:
            await server.session()
        except PtcError as error:
            return error
        except Exception as error:
            return ServerUnavailable(server=server.key.name, detail=f"{type(error).__name__}: {error}")
        return None

    return list(await asyncio.gather(*(start(s) for s in servers)))
