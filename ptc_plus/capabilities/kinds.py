"""The table of capability kinds: what each kind of capability is, read by every caller that decides by kind.

One row per :class:`CapabilityKind`: its identity prefix, how its contract is delivered, how a program or the
model reaches it, and whether its use is observed. Callers ask the table (:func:`kinds_delivered`,
:func:`kinds_reached`, :func:`kind_row`) and never compare a kind with a literal, so a new source type adds
its row here and its own module (the catalog entry it builds, a renderer for a new delivery), nothing else
(ADR 0122).

The kind's value (``tool``, ``mcp-tool``, ``skill``, ``mcp-resources``) is what plans and environments
persist: it never changes for a kind that exists.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping

import attrs


class CapabilityKind(enum.StrEnum):
    TOOL = "tool"
    """A host or plugin tool."""
    MCP_TOOL = "mcp-tool"
    SKILL = "skill"
    """A catalog line; the body is loaded only when used."""
    MCP_RESOURCES = "mcp-resources"
    """One MCP server's resources and resource templates."""


class Delivery(enum.StrEnum):
    """How a kind's contract is delivered; a delivery text puts them in this order (:mod:`.contract`)."""

    STUB = "stub"
    """A typed SDK declaration: its types (each shared type once), then its stub grouped by source."""
    CATALOG_LINE = "catalog-line"
    """One catalog line; the body is loaded only when used."""
    LISTING = "listing"
    """A listing of its own (a server's resources and templates)."""


class Reach(enum.StrEnum):
    """How a program or the model reaches a capability of a kind, so what the guard checks."""

    TOOL_NAME = "tool-name"
    """Called by its tool name: in the program's ``tools`` namespace, natively, through the guard by name."""
    LOADER = "loader"
    """Loaded through a host loader tool, named by an argument (:attr:`hookspecs.SkillSpec.loader`)."""
    RESOURCE_READER = "resource-reader"
    """Read through the plugin's resource reader tools, the server named by an argument (ADR 0072)."""


@attrs.frozen(kw_only=True)
class KindRow:
    """One kind of capability.

    :ivar prefix: how its identities start (``mcp:`` for ``mcp:github/create_issue``); ``""`` for the kind
        whose identity is its source's (``host:read_file``, ``plugin:x/y``): any identity no other row claims.
    :ivar delivery: how its contract is delivered.
    :ivar reach: how it is reached.
    :ivar observed: a host fact reports its use (a settled call of its tool or loader), so its use is
        evidence; an unobserved kind is never sampled and shows "no sample", not a 0 % that only says we
        could not see (contract 1.2 has no resource-read seam).
    """

    kind: CapabilityKind
    prefix: str
    delivery: Delivery
    reach: Reach
    observed: bool

    @property
    def source(self) -> str:
        """The source word of its identities (``mcp-resources``), ``""`` for the kind that has none of its own."""
        return self.prefix.removesuffix(":")

    def member(self, identity: str) -> str:
        """``identity`` without this kind's prefix (``mcp-resources:github`` -> ``github``)."""
        return identity.removeprefix(self.prefix)


KINDS: Mapping[CapabilityKind, KindRow] = {
    row.kind: row
    for row in (
        KindRow(kind=CapabilityKind.TOOL, prefix="", delivery=Delivery.STUB, reach=Reach.TOOL_NAME, observed=True),
        KindRow(
            kind=CapabilityKind.MCP_TOOL, prefix="mcp:", delivery=Delivery.STUB, reach=Reach.TOOL_NAME, observed=True
        ),
        KindRow(
            kind=CapabilityKind.SKILL,
            prefix="skill:",
            delivery=Delivery.CATALOG_LINE,
            reach=Reach.LOADER,
            observed=True,
        ),
        KindRow(
            kind=CapabilityKind.MCP_RESOURCES,
            prefix="mcp-resources:",
            delivery=Delivery.LISTING,
            reach=Reach.RESOURCE_READER,
            observed=False,
        ),
    )
}
"""Every kind, in :class:`CapabilityKind` order."""


def kind_row(kind: CapabilityKind | str) -> KindRow | None:
    """The row of ``kind`` (a kind or its persisted value); ``None`` for ``""`` or a value no kind has."""
    try:
        return KINDS[CapabilityKind(kind)]
    except ValueError:
        return None


def as_kind(value: CapabilityKind | str | None) -> CapabilityKind | None:
    """The kind ``value`` names (a kind or its persisted value); ``None`` for ``None`` or ``""`` (no kind: a
    capability the host does not offer). Raises ``ValueError`` for a value no kind has."""
    return None if value is None or value == "" else CapabilityKind(value)


def kinds_delivered(delivery: Delivery) -> frozenset[CapabilityKind]:
    return frozenset(k for k, row in KINDS.items() if row.delivery is delivery)


def kinds_reached(reach: Reach) -> frozenset[CapabilityKind]:
    return frozenset(k for k, row in KINDS.items() if row.reach is reach)


def observed_kinds() -> frozenset[CapabilityKind]:
    return frozenset(k for k, row in KINDS.items() if row.observed)


def tool_kind(source: str) -> CapabilityKind:
    """The kind of a tool from ``source``: the tool-name kind whose prefix starts it, the one without else.

    A tool's identity starts with its source (``mcp:github`` -> ``mcp:github/x``), so the prefix that the
    source starts with is the identity's.
    """
    rows = [row for row in KINDS.values() if row.reach is Reach.TOOL_NAME]
    return max(rows, key=lambda row: (source.startswith(row.prefix), len(row.prefix))).kind
