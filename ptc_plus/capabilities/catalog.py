"""The capability catalog: every capability the host offers, sorted by identity and checked unique.

The value types (identity, kind, revision, unmanaged marking) live in
:mod:`.capability`, below both this module and :mod:`.contract`, so that
neither imports the other (ADR 0057).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

import attrs

from hookspecs.types import SkillSpec, ToolSpec
from ptc_plus.capabilities.capability import (
    DEFAULT_UNMANAGED,
    Capability,
    ResourceSource,
    UnmanagedKind,
    revision_of,
)
from ptc_plus.capabilities.contract import resource_text, skill_text, tool_contract
from ptc_plus.capabilities.disk_cache import DiskCache, UserCache, chosen_cache
from ptc_plus.capabilities.errors import DuplicateCapability
from ptc_plus.capabilities.kinds import KINDS, CapabilityKind, tool_kind
from ptc_plus.sdk import LearnedResult, RenderedTool, decode_tools, encode_tools, render_tool, spec_inputs


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
    cache: DiskCache | UserCache | None = UserCache.DEFAULT,
    learned: Callable[[str, str], LearnedResult | None] | None = None,
) -> Catalog:
    """A catalog of everything offered. Raises :class:`DuplicateCapability` on a repeated identity.

    ``cache``: where a large catalog's tool renderings are looked up before rendering and stored
    after (by default the user's cache unless ``PTC_PLUS_CACHE=off``; ``None``: always render).
    The catalog is equal either way (ADR 0078).

    ``learned``: (identity, contract revision) -> the result shape learned for a tool without an output
    schema (ADR 0102). Its contract then shows the shape; its revision stays the one of the contract without
    it (the host's contract did not change, and what was learned stays keyed by it).
    """
    entries: list[Capability] = []
    for spec, (rendered, contract) in zip(tools, _rendered(tools, chosen_cache(cache)), strict=True):
        revision = revision_of(contract)
        shape = learned(spec.identity, revision) if learned is not None and spec.output_schema is None else None
        if shape is not None:
            rendered = render_tool(spec, learned=shape)
            contract = tool_contract(rendered)
        entries.append(
            Capability(
                identity=spec.identity,
                kind=tool_kind(spec.source),
                source=spec.source,
                name=spec.name,
                description=spec.description,
                parameters=tuple(p.name for p in rendered.parameters),
                contract=contract,
                revision=revision,
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
                source=KINDS[CapabilityKind.MCP_TOOL].prefix + source.server,
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


CACHE_ABOVE = 500
"""Tools above which :func:`build_catalog` consults the disk cache (fewer render in milliseconds)."""
CACHE_KIND = "catalog-tools"


def _rendered(tools: Sequence[ToolSpec], cache: DiskCache | None) -> list[tuple[RenderedTool, str]]:
    """Each tool rendered and its contract: from the cache when a session stored them for equal specs."""
    inputs = spec_inputs(tools) if cache is not None and len(tools) > CACHE_ABOVE else None
    key = cache.key([CACHE_KIND.encode(), inputs]) if cache is not None and inputs is not None else None
    if cache is not None and key is not None:
        payload = cache.load(CACHE_KIND, key)
        found = decode_tools(payload) if payload is not None else None
        if found is not None and found.texts is not None and len(found.tools) == len(tools):
            return list(zip(found.tools, found.texts, strict=True))
    rendered = [render_tool(spec) for spec in tools]
    contracts = [tool_contract(tool) for tool in rendered]
    if cache is not None and key is not None:
        cache.store(CACHE_KIND, key, encode_tools(rendered, texts=contracts))
    return list(zip(rendered, contracts, strict=True))


def _unmanaged_kind(spec: ToolSpec, unmanaged: Mapping[str, UnmanagedKind]) -> UnmanagedKind | None:
    if spec.source == "bindings" or spec.source.startswith("bindings:"):
        return UnmanagedKind.USER_BINDING
    return unmanaged.get(spec.name)
