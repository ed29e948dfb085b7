"""A realistic demo toolset: workspace files, a SQLite notes store and a unit converter.

Used by ``ptc-plus demo`` and the tests. Read-only tools are ``parallel``;
tools that write are ``exclusive``. Every workspace access goes through
:mod:`hookspecs.workspace_files` in a worker thread: a program racing the
tools can neither lead them out of the workspace nor stall the host.
"""

from __future__ import annotations

from pathlib import Path

from hookspecs.reference.demo_tools.files import file_tools
from hookspecs.reference.demo_tools.notes import note_tools
from hookspecs.reference.demo_tools.units import unit_tools
from hookspecs.services import ToolDefinition

DEMO_STATE_DIR = ".demo"
"""Where the demo tools keep their state inside the workspace (the notes store); the reference host
protects it from programs (:attr:`~hookspecs.HostServices.protected_paths`) when these tools are its tools."""

NOTE_TOOL_NAMES = frozenset({"notes_add", "notes_search", "notes_delete"})
"""The demo tools that use :data:`DEMO_STATE_DIR`."""


def demo_tool_definitions(workspace: Path) -> list[ToolDefinition]:
    """Every demo tool, bound to ``workspace`` (notes live in ``<workspace>/.demo/notes.sqlite``)."""
    root = Path(workspace).resolve()
    return [*file_tools(root), *note_tools(root, DEMO_STATE_DIR), *unit_tools()]


__all__ = ["DEMO_STATE_DIR", "NOTE_TOOL_NAMES", "demo_tool_definitions"]
