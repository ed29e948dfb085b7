"""A capability and its value types: identity, contract revision, unmanaged marking (kinds: :mod:`.kinds`).

Identity (``host:read_file``, ``plugin:x/y``, ``mcp:github/create_issue``,
``skill:pdf``, ``mcp-resources:github``) names *where* a capability comes
from and *which member* it is; it survives edits of its contract. The
revision is a digest of the delivered contract text, so any change the model
could see changes it. Unmanaged things (``run_code``, REPL state, discovery,
user bindings) are kept in the catalog, marked, and never listed as managed.

Plain values with no behaviour beyond their own fields: :mod:`.contract`
renders them and :mod:`.catalog` collects them, and neither imports the other.
"""

from __future__ import annotations

import enum
import hashlib
from collections.abc import Mapping

import attrs

from hookspecs.types import ToolSpec
from ptc_plus.capabilities.kinds import KINDS, CapabilityKind
from ptc_plus.sdk import RenderedTool


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
    description: str = ""
    """What the server says of itself (its MCP ``instructions``): part of the source's contract."""

    @property
    def identity(self) -> str:
        return KINDS[CapabilityKind.MCP_RESOURCES].prefix + self.server


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
