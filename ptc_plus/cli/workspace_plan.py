"""The plan a new session in a workspace would get: the one code path behind ``capabilities plan`` and ``search``.

The catalog is the reference host's demo tools for the workspace (MCP
servers join later) or the tools of a file given on the command line; the
plan is computed exactly as session start computes it
(:func:`ptc_plus.session.provision.session_plan`), from the workspace's
effective config and the usage statistics of its store and the user store.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import attrs

from hookspecs import TokenCounter, ToolSpec
from ptc_plus.capabilities import Catalog, CatalogSnapshot, CatalogUnavailable, build_catalog, offline_counter
from ptc_plus.cli.options import read_tool_set
from ptc_plus.config import LoadedConfig, load_config
from ptc_plus.plan import CapabilityPlan
from ptc_plus.session import effective_snapshot, session_plan


def workspace_tool_specs(workspace: Path) -> list[ToolSpec]:
    """The tools the workspace offers: the reference host's demo tools (MCP servers join later)."""
    try:
        from hookspecs.reference.demo_tools import demo_tool_definitions
    except ImportError as exc:
        raise CatalogUnavailable(detail=str(exc)) from exc
    return [definition.spec for definition in demo_tool_definitions(workspace)]


def workspace_catalog(
    workspace: Path, provider: Callable[[Path], Sequence[ToolSpec]] = workspace_tool_specs
) -> Catalog:
    """The catalog of ``workspace`` built from ``provider``'s tools."""
    return build_catalog(tools=provider(workspace))


@attrs.frozen(kw_only=True)
class WorkspacePlan:
    """A new session's plan in ``workspace``, with what it was computed from."""

    workspace: Path
    loaded: LoadedConfig
    catalog: Catalog
    counter: TokenCounter
    plan: CapabilityPlan

    def snapshot(self) -> CatalogSnapshot:
        """What discovery in such a session answers from: the plan's effective set (``off`` left out)."""
        return effective_snapshot(self.plan, self.catalog, self.counter)


def new_session_plan(workspace: Path, catalog: Catalog | None = None) -> WorkspacePlan:
    """The plan a new session in ``workspace`` would get over ``catalog`` (default: the workspace's demo tools)."""
    loaded = load_config(workspace)
    catalog = catalog if catalog is not None else workspace_catalog(workspace)
    counter = offline_counter()
    plan = session_plan(catalog, loaded, counter, workspace=workspace)
    return WorkspacePlan(workspace=workspace, loaded=loaded, catalog=catalog, counter=counter, plan=plan)


def tools_catalog(tools: str | None, workspace: Path) -> Catalog | None:
    """The catalog of the ``--tools`` value (``None`` without one: the workspace's own tools)."""
    return None if tools is None else build_catalog(tools=read_tool_set(tools, workspace).specs)
