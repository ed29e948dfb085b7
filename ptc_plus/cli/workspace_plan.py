"""The plan a new session in a workspace would get: the one code path behind ``capabilities plan`` and ``search``.

The catalog is the reference host's demo tools for the workspace or the
tools of a file given on the command line, plus the tools and resource
sources of the workspace's usable MCP servers — from each one's ``tools/list``
snapshot, as a session plans; a server without one (or every server, with
``refresh``: ``--refresh-sources``) is started to list, and stopped after
(ADR 0097); the plan is computed exactly as
session start computes it
(:func:`ptc_plus.session.provision.session_plan`), from the workspace's
effective config and the usage statistics of its store and the user store.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from pathlib import Path

import attrs
import click

from hookspecs import TokenCounter, ToolDefinition, ToolSpec
from ptc_plus.adapters.mcp import McpSources, ToolsSnapshot
from ptc_plus.capabilities import Catalog, CatalogUnavailable, DeferredCounter, build_catalog
from ptc_plus.cli.options import read_tool_set
from ptc_plus.config import LoadedConfig, load_config
from ptc_plus.discovery import CatalogSnapshot
from ptc_plus.plan import CapabilityPlan
from ptc_plus.session import effective_snapshot, session_plan

_EXEC = "ptc-plus-exec"
"""The pseudo session ``exec`` holds the workspace's MCP servers under for its one run."""
_LISTING = "ptc-plus-cli"
"""The pseudo session the CLI opens the workspace's MCP servers under, to list them once."""


def workspace_tool_specs(workspace: Path) -> list[ToolSpec]:
    """The host tools the workspace offers: the reference host's demo tools."""
    try:
        from hookspecs.reference.demo_tools import demo_tool_definitions
    except ImportError as exc:
        raise CatalogUnavailable(detail=str(exc)) from exc
    return [definition.spec for definition in demo_tool_definitions(workspace)]


@attrs.frozen(kw_only=True)
class SourcedCatalog:
    """A catalog and what its MCP servers said: refused servers, failed starts, tools left out for their names."""

    catalog: Catalog
    notes: tuple[str, ...] = ()
    provenance: Mapping[str, ToolsSnapshot] = attrs.field(factory=dict)
    """By MCP server: the ``tools/list`` snapshot its tools came from (listed live: absent)."""


def sourced_catalog(workspace: Path, tools: Sequence[ToolSpec], *, refresh: bool = False) -> SourcedCatalog:
    """``tools`` plus the tools and resource sources of ``workspace``'s usable MCP servers (ADR 0072), from
    their snapshots (``refresh``: every server not ``off`` is started to list again, ADR 0097)."""
    loaded = load_config(workspace)
    if not loaded.config.mcp.servers:
        return SourcedCatalog(catalog=build_catalog(tools=tools))
    sources = McpSources()
    try:
        sources.open(_LISTING, loaded, workspace, progress=_progress, refresh=refresh)
        view = sources.settle(_LISTING, tools)
        catalog = build_catalog(tools=view, resources=sources.resource_sources(_LISTING))
        return SourcedCatalog(
            catalog=catalog, notes=sources.diagnostics(_LISTING), provenance=sources.provenance(_LISTING)
        )
    finally:
        sources.close()


def _progress(line: str) -> None:
    """A server being waited for is named on stderr: a hung one is no silent pause (ADR 0092)."""
    click.echo(line, err=True)


def workspace_catalog(
    workspace: Path, provider: Callable[[Path], Sequence[ToolSpec]] = workspace_tool_specs
) -> Catalog:
    """The catalog of ``workspace``: ``provider``'s tools and its MCP servers'."""
    return sourced_catalog(workspace, provider(workspace)).catalog


@attrs.frozen(kw_only=True)
class WorkspacePlan:
    """A new session's plan in ``workspace``, with what it was computed from."""

    workspace: Path
    loaded: LoadedConfig
    catalog: Catalog
    counter: TokenCounter
    plan: CapabilityPlan
    notes: tuple[str, ...] = ()
    """What the workspace's MCP servers said (refused, not started, tools left out)."""
    provenance: Mapping[str, ToolsSnapshot] = attrs.field(factory=dict)
    """By MCP server: the ``tools/list`` snapshot its tools came from (:attr:`SourcedCatalog.provenance`)."""

    def snapshot(self) -> CatalogSnapshot:
        """What discovery in such a session answers from: the plan's effective set (``off`` left out)."""
        return effective_snapshot(self.plan, self.catalog, self.counter)


def new_session_plan(workspace: Path, sourced: SourcedCatalog | None = None, *, refresh: bool = False) -> WorkspacePlan:
    """The plan a new session in ``workspace`` would get over ``sourced`` (default: the workspace's tools;
    ``refresh``: its MCP servers listed live)."""
    loaded = load_config(workspace)
    if sourced is None:
        sourced = sourced_catalog(workspace, workspace_tool_specs(workspace), refresh=refresh)
    counter = DeferredCounter()  # built when the plan measures something: none without tools
    plan = session_plan(sourced.catalog, loaded, counter, workspace=workspace)
    return WorkspacePlan(
        workspace=workspace,
        loaded=loaded,
        catalog=sourced.catalog,
        counter=counter,
        plan=plan,
        notes=sourced.notes,
        provenance=sourced.provenance,
    )


def tools_catalog(tools: str | None, workspace: Path, *, refresh: bool = False) -> SourcedCatalog | None:
    """The catalog of the ``--tools`` value and the MCP servers (``None`` without one: the workspace's own tools)."""
    return None if tools is None else sourced_catalog(workspace, read_tool_set(tools, workspace).specs, refresh=refresh)


@attrs.frozen(kw_only=True)
class PlannedTools:
    """``exec``'s session: the plan over its tools and MCP servers, and the tools it offers (``off`` absent)."""

    plan: WorkspacePlan
    offered: tuple[ToolDefinition, ...]
    """The tool set's and the servers' tools in the plan's effective set (full and on-demand)."""


@contextlib.contextmanager
def planned_tools(
    workspace: Path,
    definitions: Sequence[ToolDefinition],
    *,
    sources: bool = True,
    only: Collection[str] | None = None,
    progress: Callable[[str], None] | None = None,
) -> Iterator[PlannedTools]:
    """Plan ``exec``'s session like any other: ``definitions`` and (``sources``) the workspace's allowed MCP
    servers (``only``: just those named), under the workspace's ``[capabilities]`` choices. The servers stay
    held until the block ends: their tools are called through them."""
    loaded = load_config(workspace)
    mcp = McpSources()
    try:
        tools = list(definitions)
        notes: tuple[str, ...] = ()
        if sources and loaded.config.mcp.servers:
            mcp.open(_EXEC, loaded, workspace, progress, only=only)
            mcp.settle(_EXEC, [d.spec for d in definitions])
            tools += mcp.tools(_EXEC)
            notes = mcp.diagnostics(_EXEC)
        provenance = mcp.provenance(_EXEC)
        sourced = SourcedCatalog(
            catalog=build_catalog(tools=[t.spec for t in tools]), notes=notes, provenance=provenance
        )
        planned = new_session_plan(workspace, sourced)
        effective = {entry.identity for entry in planned.plan.effective()}
        yield PlannedTools(plan=planned, offered=tuple(t for t in tools if t.spec.identity in effective))
    finally:
        mcp.close()
