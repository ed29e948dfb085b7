"""Filler for the catalog sizes: schema-only tools, the real MCP corpus first, then generated services.

``filler(n)`` is deterministic and its names never collide with the world's
tools, the MCP time server's, the engine's or the plugin's own, nor with each
other. The real corpus (tests/data/mcp) and the synthetic services come from
``benchmarks/catalog_data.py``; beyond one copy of the synthetic services,
numbered copies stand for more accounts of the same SaaS servers, named the
way hosts prefix a server's tools (``jira2_list_tickets``).
"""

from __future__ import annotations

import functools
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import attrs

from hookspecs.types import ToolSpec

from .world import ENGINE_TOOL_NAMES, MCP_TOOL_NAMES, make_world, world_tools

PLUGIN_TOOL_NAMES = frozenset({"read_spill", "read_mcp_resource", "list_mcp_resources"})
"""Tools the PTC Plus plugin may add next to ``run_code``."""


def _catalog_data() -> ModuleType:
    # The same module name the search-quality tests load it under, so one copy serves both.
    name = "bench_catalog_data"
    if name not in sys.modules:
        path = Path(__file__).resolve().parents[1] / "catalog_data.py"
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


@functools.cache
def reserved_names() -> frozenset[str]:
    """Names filler never takes: every executable tool of a run, and the engine's and plugin's tools."""
    here = Path("/nonexistent-workspace")
    world = frozenset(d.spec.name for d in world_tools(here, make_world(here)))
    return world | MCP_TOOL_NAMES | ENGINE_TOOL_NAMES | PLUGIN_TOOL_NAMES


def _copy(spec: ToolSpec, number: int) -> ToolSpec:
    server = spec.source.removeprefix("mcp:")
    return attrs.evolve(
        spec,
        name=f"{server}{number}_{spec.name}",
        description=f"{spec.description.rstrip('.。')} (account {number}).",
        source=f"mcp:{server}{number}",
    )


@functools.cache
def _pool(n: int) -> tuple[ToolSpec, ...]:
    data = _catalog_data()
    taken = set(reserved_names())
    pool: list[ToolSpec] = []

    def offer(specs: list[ToolSpec]) -> None:
        for spec in specs:
            if len(pool) < n and spec.name not in taken:
                taken.add(spec.name)
                pool.append(spec)

    offer(data.real_tools())
    offer(data.synthetic_tools())
    number = 2
    while len(pool) < n:
        offer([_copy(spec, number) for spec in data.synthetic_tools()])
        number += 1
    return tuple(pool)


def filler(n: int) -> list[ToolSpec]:
    """``n`` schema-only tools: the real corpus, then the synthetic services, then numbered copies of them."""
    if n < 0:
        raise ValueError(f"a catalog cannot hold {n} filler tools")
    return list(_pool(n))
