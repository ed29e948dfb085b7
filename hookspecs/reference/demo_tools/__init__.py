"""A realistic demo toolset: workspace files, a SQLite notes store and a unit converter.

Used by ``ptc-plus demo`` and the tests. Read-only tools are ``parallel``;
tools that write are ``exclusive``.
"""

from __future__ import annotations

from pathlib import Path

from hookspecs.reference.demo_tools.files import file_tools
from hookspecs.reference.demo_tools.notes import note_tools
from hookspecs.reference.demo_tools.units import unit_tools
from hookspecs.services import ToolDefinition


def demo_tool_definitions(workspace: Path) -> list[ToolDefinition]:
    """Every demo tool, bound to ``workspace`` (notes live in ``<workspace>/.demo/notes.sqlite``)."""
    root = Path(workspace).resolve()
    return [*file_tools(root), *note_tools(root / ".demo" / "notes.sqlite"), *unit_tools()]


__all__ = ["demo_tool_definitions"]
