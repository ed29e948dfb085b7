"""Delivered contract text: one capability's, or several delivered together.

A delivery puts the types of all its tools first (each declaration once, so a
shared type is delivered — and charged — once), then tool stubs grouped by
source, then skill catalog lines, then resource listings. One capability's
contract is simply the delivery of that capability alone.
"""

from __future__ import annotations

from collections.abc import Sequence

from hookspecs.types import SkillSpec, ToolSpec
from ptc_plus.capabilities.capability import Capability, ResourceSource
from ptc_plus.sdk import RenderedTool, assemble, one_line, qualifier, render_tool, settle

_SEPARATOR = "\n\n\n"


def tool_contract(tool: RenderedTool) -> str:
    """The delivered text of one rendered tool (no module header)."""
    return assemble([tool], header=False)


def skill_text(skills: Sequence[SkillSpec]) -> str:
    """Catalog lines of skills; the body is never part of a contract."""
    lines = ["# ── skills (catalog lines; a skill's body loads only when used) ──"]
    lines += [f"# skill {one_line(s.name)}: {one_line(s.description)}" for s in sorted(skills, key=lambda s: s.name)]
    return "\n".join(lines) + "\n"


def resource_text(source: ResourceSource) -> str:
    """The listing of one MCP server's resources and resource templates."""
    lines = [f"# ── mcp-resources:{one_line(source.server)} (read through the resource reader) ──"]
    if source.description:
        lines.append(f"# {one_line(source.description)}")
    if not source.entries:  # built without listing (MCP servers, ADR 0072): say how to list them
        server = one_line(source.server)
        lines.append(f'# await resources.list("{server}") lists them; await resources.read(uri) reads one')
    for entry in sorted(source.entries, key=lambda e: (e.uri or e.uri_template or "", e.name)):
        where = f"resource {entry.uri}" if entry.uri is not None else f"template {entry.uri_template}"
        note = f": {entry.description}" if entry.description else ""
        lines.append(f"# {one_line(where)} — {one_line(entry.name + note)}")
    return "\n".join(lines) + "\n"


def delivery_text(capabilities: Sequence[Capability]) -> str:
    """The text delivering ``capabilities`` together (any order; the text is sorted).

    Tools whose type names clash with another delivered tool are re-rendered
    with a qualifier; every other tool reuses its catalog rendering.
    """
    tools = sorted((c for c in capabilities if c.spec is not None), key=lambda c: c.identity)
    by_spec = {id(c.spec): c for c in tools}

    def render(spec: ToolSpec, level: int) -> RenderedTool:
        cached = by_spec[id(spec)].tool
        if level == 0 and cached is not None:
            return cached
        return render_tool(spec, qualifier=qualifier(spec, level))

    blocks: list[str] = []
    specs = [c.spec for c in tools if c.spec is not None]
    if specs:
        blocks.append(assemble(settle(specs, render), header=False).rstrip("\n"))
    skills = [
        SkillSpec(name=c.name, description=c.description, source=c.source) for c in capabilities if c.kind == "skill"
    ]
    if skills:
        blocks.append(skill_text(skills).rstrip("\n"))
    blocks += [
        c.contract.rstrip("\n") for c in sorted(capabilities, key=lambda c: c.identity) if c.kind == "mcp-resources"
    ]
    return _SEPARATOR.join(blocks) + "\n" if blocks else ""
