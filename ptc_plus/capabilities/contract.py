"""Delivered contract text: one capability's, or several delivered together.

A delivery puts the types of all its tools first (each declaration once, so a
shared type is delivered — and charged — once), then tool stubs grouped by
source, then skill catalog lines, then resource listings. One capability's
contract is simply the delivery of that capability alone.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence

from hookspecs.types import SkillSpec, ToolSpec
from ptc_plus.capabilities.capability import Capability, ResourceSource
from ptc_plus.capabilities.cost import LINE_START
from ptc_plus.capabilities.kinds import Delivery, kinds_delivered
from ptc_plus.sdk import RenderedTool, assemble, one_line, qualifier, render_tool, settle

_SEPARATOR = "\n\n\n"
_STUB_KINDS = kinds_delivered(Delivery.STUB)


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

    One block per :class:`~.kinds.Delivery`, in its order, of the capabilities whose kind delivers so.
    Tools whose type names clash with another delivered tool are re-rendered
    with a qualifier; every other tool reuses its catalog rendering.
    """
    blocks: list[str] = []
    for delivery in Delivery:
        kinds = kinds_delivered(delivery)
        blocks += _DELIVER[delivery]([c for c in capabilities if c.kind in kinds])
    return _SEPARATOR.join(blocks) + "\n" if blocks else ""


def _stubs(capabilities: Sequence[Capability]) -> list[str]:
    tools = sorted((c for c in capabilities if c.spec is not None), key=lambda c: c.identity)
    by_spec = {id(c.spec): c for c in tools}

    def render(spec: ToolSpec, level: int) -> RenderedTool:
        cached = by_spec[id(spec)].tool
        if level == 0 and cached is not None:
            return cached
        return render_tool(spec, qualifier=qualifier(spec, level), learned=cached.learned if cached else None)

    specs = [c.spec for c in tools if c.spec is not None]
    return [assemble(settle(specs, render), header=False).rstrip("\n")] if specs else []


def _catalog_lines(capabilities: Sequence[Capability]) -> list[str]:
    skills = [SkillSpec(name=c.name, description=c.description, source=c.source) for c in capabilities]
    return [skill_text(skills).rstrip("\n")] if skills else []


def _listings(capabilities: Sequence[Capability]) -> list[str]:
    return [c.contract.rstrip("\n") for c in sorted(capabilities, key=lambda c: c.identity)]


_DELIVER: Mapping[Delivery, Callable[[Sequence[Capability]], list[str]]] = {
    Delivery.STUB: _stubs,
    Delivery.CATALOG_LINE: _catalog_lines,
    Delivery.LISTING: _listings,
}
"""The blocks of a delivery, by how its kinds deliver: a new delivery adds its renderer here."""


class ToolTally:
    """The token count of :func:`delivery_text` over tools, kept while tools join one at a time.

    For a ``count`` additive at :data:`.cost.LINE_START` cuts (:func:`.cost.line_counter`): the text of
    tools is its units — each distinct type, each source's header line, each stub — in order, each
    followed by its separator, every unit starting a line with a letter, ``_``, ``#`` or ``@``; so its
    count is the sum of the units' counts and a tool's trial costs only its own units. :meth:`trial`
    says ``None`` where this does not hold (a type name clashing with a chosen tool's, which
    :func:`delivery_text` re-renders qualified; a tool without a catalog rendering; a unit starting
    otherwise): the caller then measures the whole text.
    """

    def __init__(self, count: Callable[[str], int]) -> None:
        self._counter = count
        self._counted: dict[str, int] = {}  # each unit text once per tally: trials re-count the last stub
        self._types: dict[str, str] = {}
        self._sources: set[str] = set()
        self._last: tuple[str, str, str, str] | None = None  # (source, name, function, stub) last in the text
        self._units = 0  # every unit with its separator, the last stub's too
        self._pending: tuple[Capability, _Joined | None] | None = None

    def _count(self, text: str) -> int:
        known = self._counted.get(text)
        if known is None:
            known = self._counted[text] = self._counter(text)
        return known

    def trial(self, capability: Capability) -> int | None:
        """The count of the delivery of the tools so far plus ``capability``, or ``None`` (see above)."""
        joined = self._join(capability)
        self._pending = (capability, joined)
        return None if joined is None else joined[0]

    def add(self, capability: Capability) -> None:
        """``capability`` joins; its :meth:`trial` must not have been ``None``."""
        pending = self._pending
        joined = pending[1] if pending is not None and pending[0] is capability else self._join(capability)
        if joined is None:
            raise ValueError(f"{capability.identity} cannot join a tally")
        _, self._units, new_types, source, self._last = joined
        self._types.update(new_types)
        self._sources.add(source)
        self._pending = None

    def _join(self, capability: Capability) -> _Joined | None:
        tool = capability.tool
        if capability.spec is None or tool is None or capability.kind not in _STUB_KINDS:
            return None
        new_types: dict[str, str] = {}
        for decl in tool.types:
            known = self._types.get(decl.name, new_types.get(decl.name))
            if known is not None and known != decl.text:
                return None
            if known is None:
                if not _starts_line(decl.text):
                    return None
                new_types[decl.name] = decl.text
        if not _starts_line(tool.stub):
            return None
        units = self._units + sum(self._count(text + _SEPARATOR) for text in new_types.values())
        if tool.source not in self._sources:
            units += self._count(_header(tool.source))
        units += self._count(tool.stub + _SEPARATOR)
        mine = (tool.source, tool.name, tool.function, tool.stub)
        last = mine if self._last is None or mine[:3] > self._last[:3] else self._last
        # The text ends its last stub with one newline (delivery_text strips and re-adds it), not a separator.
        total = units - self._count(last[3] + _SEPARATOR) + self._count(last[3].rstrip("\n") + "\n")
        return total, units, new_types, tool.source, last


_Joined = tuple[int, int, dict[str, str], str, tuple[str, str, str, str]]
"""A trial's total, its units' sum, its new types, its source and the stub then last in the text."""


@functools.lru_cache(maxsize=4096)
def _header(source: str) -> str:
    # As sdk.assemble heads a source's stubs; cached, as one source heads many deliveries.
    return f"# ── {one_line(source)} ──\n"


def _starts_line(text: str) -> bool:
    return LINE_START.match("\n" + text, 1) is not None
