"""The capability catalog: every capability the host offers, sorted by identity and checked unique.

The value types (identity, kind, revision, unmanaged marking) live in
:mod:`.capability`, below both this module and :mod:`.contract`, so that
neither imports the other (ADR 0057).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import attrs

from hookspecs.types import SkillSpec, ToolSpec
from ptc_plus.capabilities.capability import (
    DEFAULT_UNMANAGED,
    Capability,
    CapabilityKind,
    ResourceSource,
    UnmanagedKind,
    revision_of,
)
from ptc_plus.capabilities.contract import resource_text, skill_text, tool_contract
from ptc_plus.capabilities.errors import DuplicateCapability
from ptc_plus.sdk import render_tool


@attrs.frozen(kw_only=True)
class Catalog:
    """Capabilities sorted by identity (unique). Build with :func:`build_catalog`."""

    capabilities: tuple[Capability, ...] = ()
    _by_identity: Mapping[str, Capability] = attrs.field(init=False, repr=False, eq=False)

    def __attrs_post_init__(self) -> None:
        object.__setattr__(self, "_by_identity", {c.identity: c for c in self.capabilities})

    def get(self, identity: str) -> Capability | None:
        return self._by_identity.get(identity)

    def managed(self) -> tuple[Capability, ...]:
        return tuple(c for c in self.capabilities if c.managed)

    def unmanaged(self) -> tuple[Capability, ...]:
        return tuple(c for c in self.capabilities if not c.managed)

    def restrict(self, identities: Iterable[str]) -> Catalog:
        """The sub-catalog holding only ``identities`` (unknown ones ignored)."""
        keep = set(identities)
        return Catalog(capabilities=tuple(c for c in self.capabilities if c.identity in keep))


def build_catalog(
    *,
    tools: Sequence[ToolSpec] = (),
    skills: Sequence[SkillSpec] = (),
    resources: Sequence[ResourceSource] = (),
    unmanaged: Mapping[str, UnmanagedKind] = DEFAULT_UNMANAGED,
) -> Catalog:
    """A catalog of everything offered. Raises :class:`DuplicateCapability` on a repeated identity."""
    entries: list[Capability] = []
    for spec in tools:
        rendered = render_tool(spec)
        contract = tool_contract(rendered)
        entries.append(
            Capability(
                identity=spec.identity,
                kind=CapabilityKind.MCP_TOOL if spec.source.startswith("mcp:") else CapabilityKind.TOOL,
                source=spec.source,
                name=spec.name,
                description=spec.description,
                parameters=tuple(p.name for p in rendered.parameters),
                contract=contract,
                revision=revision_of(contract),
                unmanaged=_unmanaged_kind(spec, unmanaged),
                spec=spec,
                tool=rendered,
            )
        )
    for skill in skills:
        contract = skill_text([skill])
        entries.append(
            Capability(
                identity=skill.identity,
                kind=CapabilityKind.SKILL,
                source=skill.source,
                name=skill.name,
                description=skill.description,
                contract=contract,
                revision=revision_of(contract),
            )
        )
    for source in resources:
        contract = resource_text(source)
        entries.append(
            Capability(
                identity=source.identity,
                kind=CapabilityKind.MCP_RESOURCES,
                source=f"mcp:{source.server}",
                name=source.server,
                description=" ".join(
                    [source.description, *(e.name + " " + e.description for e in source.entries)]
                ).strip(),
                contract=contract,
                revision=revision_of(contract),
            )
        )
    by_identity: dict[str, Capability] = {}
    for entry in entries:
        if entry.identity in by_identity:
            raise DuplicateCapability(identity=entry.identity)
        by_identity[entry.identity] = entry
    return Catalog(capabilities=tuple(by_identity[i] for i in sorted(by_identity)))


def _unmanaged_kind(spec: ToolSpec, unmanaged: Mapping[str, UnmanagedKind]) -> UnmanagedKind | None:
    if spec.source == "bindings" or spec.source.startswith("bindings:"):
        return UnmanagedKind.USER_BINDING
    return unmanaged.get(spec.name)
