"""Which names a cell binds and reads, and which names provenance drops (ADR 0081).

A binding stays only while the ``run_code`` call that declared it is on the model-visible
surface. When compaction hides a cell, every name it bound or read is *tainted* (it may have
rebound or mutated any of them); a later visible cell that reads a tainted name taints what
it binds, and one that binds a name without reading a tainted one makes it clean again. The
tainted set over a cell's path is what the kernel deletes before the next cell; recording it
in that cell's journal entry lets a replay delete the same names at the same point.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

import attrs

from ptc_plus.runtime.worker.cell import bound_names


@attrs.frozen
class CellNames:
    bound: frozenset[str]
    """Names the cell binds at its top level (they land in the kernel's namespace)."""
    loaded: frozenset[str]
    """Every name the cell reads anywhere (its nested functions included): what it may depend on."""


def cell_names(source: str) -> CellNames:
    """The names of ``source``; a cell that does not parse binds and reads nothing."""
    try:
        tree = ast.parse(source)
        bound = bound_names(source)
    except (SyntaxError, ValueError):
        return CellNames(bound=frozenset(), loaded=frozenset())
    loaded = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)}
    return CellNames(bound=frozenset(bound), loaded=frozenset(loaded))


@attrs.frozen
class PathCell:
    hidden: bool
    names: CellNames


def tainted(path: Iterable[PathCell]) -> frozenset[str]:
    """The names provenance drops after the cells of ``path`` (oldest first)."""
    dropped: set[str] = set()
    for cell in path:
        if cell.hidden:
            dropped |= cell.names.bound | cell.names.loaded
        elif cell.names.loaded & dropped:
            dropped |= cell.names.bound
        else:
            dropped -= cell.names.bound
    return frozenset(dropped)
