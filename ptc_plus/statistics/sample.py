"""What one settled session family contributes: one piece of evidence per capability available in it.

Only identities, revisions and evidence bits: a sample never holds user
text, tool arguments or results, so the store built from samples cannot
either.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

import attrs

from ptc_plus.statistics.shapes import check as check_shape

Disclosure = Literal["full", "on-demand"]
"""How the capability was offered when it was available (``off`` and absent capabilities are not evidence)."""

DISCLOSURES: frozenset[str] = frozenset({"full", "on-demand"})


def _disclosure(_: object, attribute: attrs.Attribute[str], value: str) -> None:
    if value not in DISCLOSURES:
        raise ValueError(f"{attribute.name} must be 'full' or 'on-demand', got {value!r}")


def _non_empty(_: object, attribute: attrs.Attribute[str], value: str) -> None:
    if not value:
        raise ValueError(f"{attribute.name} must not be empty")


@attrs.frozen(kw_only=True)
class Evidence:
    """One capability in one family: it was available (``full`` or ``on-demand`` in some agent's frozen plan)
    and, when ``used``, really dispatched into its owner at least once (success, failure or cancel).

    ``revision`` is the contract revision the family saw; ``schema_revision`` the call-shape revision
    (:func:`ptc_plus.statistics.revisions.schema_revision_of`), ``""`` when unknown: then only samples of
    the exact same ``revision`` count for it (ADR 0066). ``shape``/``results``: what its results looked like
    (ADR 0102).
    """

    def __attrs_post_init__(self) -> None:
        if self.shape is not None:
            check_shape(self.shape)

    identity: str = attrs.field(validator=_non_empty)
    revision: str
    disclosure: Disclosure = attrs.field(validator=_disclosure)
    used: bool
    schema_revision: str = ""
    shape: dict[str, Any] | None = None
    """The learned output shape of its results in this family (:mod:`.shapes`; ``None``: none learned, e.g. the
    contract publishes an output schema, or ``[statistics] learn_output_shapes = false``). Never a value."""
    results: int = 0
    """How many settled results ``shape`` was learned from."""


def _as_tuple(evidence: Iterable[Evidence]) -> tuple[Evidence, ...]:
    return tuple(evidence)


@attrs.frozen(kw_only=True)
class FamilySample:
    """A settled family's contribution: one :class:`Evidence` per capability available in it.

    ``family_id`` is the root session's id from the host's lineage (stable across resumes: recording the
    family again revises its sample in place). ``workspace`` is the resolved real path of the workspace
    the evidence belongs to (it picks the store; it is not written into it). Identities must be unique.
    """

    family_id: str = attrs.field(validator=_non_empty)
    workspace: str
    plan_config_revision: str
    evidence: tuple[Evidence, ...] = attrs.field(converter=_as_tuple)

    @evidence.validator
    def _unique(self, _: attrs.Attribute[tuple[Evidence, ...]], value: tuple[Evidence, ...]) -> None:
        identities = [item.identity for item in value]
        if len(set(identities)) != len(identities):
            repeated = sorted({i for i in identities if identities.count(i) > 1})
            raise ValueError(f"one Evidence per capability, repeated: {', '.join(repeated)}")


__all__ = ["DISCLOSURES", "Disclosure", "Evidence", "FamilySample"]
