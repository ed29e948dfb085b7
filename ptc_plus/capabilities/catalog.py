"""The capability catalog: what the host offers, each with a stable identity and a contract revision.

Identity (``host:read_file``, ``plugin:x/y``, ``mcp:github/create_issue``,
``skill:pdf``, ``mcp-resources:github``) names *where* a capability comes
from and *which member* it is; it survives edits of its contract. The
revision is a digest of the delivered contract text, so any change the model
could see changes it. Unmanaged things (``run_code``, REPL state, discovery,
user bindings) are kept in the catalog, marked, and never listed as managed.
"""

from __future__ import annotations

import enum
import hashlib
from collections.abc import Iterable, Mapping, Sequence

import attrs

from hookspecs.types import SkillSpec, ToolSpec
from ptc_plus.capabilities.contract import resource_text, skill_text, tool_contract
from ptc_plus.capabilities.errors import DuplicateCapability
from ptc_plus.sdk import RenderedTool, render_tool


class CapabilityKind(enum.StrEnum):
    TOOL = "tool"
    """A host or plugin tool."""
    MCP_TOOL = "mcp-tool"
    SKILL = "skill"
    """A catalog line; the body is loaded only when used."""
    MCP_RESOURCES = "mcp-resources"
    """One MCP server's resources and resource templates."""


class UnmanagedKind(enum.StrEnum):
    """Things the plan never manages: always present, never ``full``/``on-demand``/``off``."""

    RUN_CODE = "run-code"
    REPL_STATE = "repl-state"
    DISCOVERY = "discovery"
    USER_BINDING = "user-binding"
    HUMAN_COMMAND = "human-command"


DEFAULT_UNMANAGED: Mapping[str, UnmanagedKind] = {
    "run_code": UnmanagedKind.RUN_CODE,
    "repl_state": UnmanagedKind.REPL_STATE,
    "capabilities_search": UnmanagedKind.DISCOVERY,
    "capabilities_find": UnmanagedKind.DISCOVERY,
    "capabilities_inspect": UnmanagedKind.DISCOVERY,
    "capabilities_tree": UnmanagedKind.DISCOVERY,
}
"""Tool names (from any source) that are unmanaged; sources starting ``bindings`` are user bindings."""


@attrs.frozen(kw_only=True)
class ResourceEntry:
    """One MCP resource (``uri``) or resource template (``uri_template``) of a server."""

    name: str
    description: str = ""
    uri: str | None = None
    uri_template: str | None = None


@attrs.frozen(kw_only=True)
class ResourceSource:
    """The resources and templates one MCP server offers; managed as one capability."""

    server: str
    entries: tuple[ResourceEntry, ...] = ()

    @property
    def identity(self) -> str:
        return f"mcp-resources:{self.server}"


@attrs.frozen(kw_only=True)
class Capability:
    """One catalog entry.

    ``contract`` is the text delivered to the model for this capability alone
    (its types and stub, a skill's catalog line, a resource listing);
    ``revision`` is ``sha256:<16 hex>`` of it. ``parameters`` are the real
    argument names (searchable). ``tool``/``spec`` are kept for tools so that
    deliveries of several tools can share and re-qualify their types.
    """

    identity: str
    kind: CapabilityKind
    source: str
    name: str
    description: str
    parameters: tuple[str, ...] = ()
    contract: str
    revision: str
    unmanaged: UnmanagedKind | None = None
    spec: ToolSpec | None = attrs.field(default=None, eq=False, repr=False)
    tool: RenderedTool | None = attrs.field(default=None, eq=False, repr=False)

    @property
    def managed(self) -> bool:
        return self.unmanaged is None


def tool_identity(source: str, name: str) -> str:
    """``host:read_file`` for a plain source; ``mcp:github/create_issue`` when the source has a colon.

    The same rule as :attr:`hookspecs.ToolSpec.identity` (the host contract owns it).
    """
    return ToolSpec(name=name, description="", source=source).identity


def revision_of(contract: str) -> str:
    """The contract revision: a digest of the delivered text."""
    return "sha256:" + hashlib.sha256(contract.encode("utf-8", "surrogatepass")).hexdigest()[:16]


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
                description=" ".join(e.name + " " + e.description for e in source.entries),
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
