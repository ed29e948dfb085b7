"""When samples of a capability still count after its contract revision changed (ADR 0066).

The identity (source + member) decides *which* capability a sample is
about: the same name from another source is another identity and never
shares samples. Within one identity, the contract revision changes with
any text the model sees; whether older samples still predict use of the
new contract depends on what changed:

- **Text-only edits** (a description, a parameter's description, a title,
  examples, defaults) keep the call shape: samples carry over.
- **Optional parameters added or removed** keep every call that needed only
  the required inputs valid: samples carry over.
- **An incompatible schema change** (a required parameter added, removed or
  renamed, or a required parameter's type changed) makes it another operation:
  samples start fresh ("no sample" until new families use it).
- **Skills and MCP resource sources** have no call shape: their contract is
  a catalog line or a listing, so every edit carries over.

The call shape is kept as its own digest, the *schema revision*, next to
the contract revision in each sample. A sample whose schema revision is
unknown (``""``: an older store, a caller without the catalog) counts only
for its exact contract revision.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from hookspecs.serialization import canonical_bytes
from ptc_plus.capabilities import Capability, Reach, kinds_reached

ANNOTATIONS: frozenset[str] = frozenset(
    {"description", "title", "examples", "example", "default", "$comment", "deprecated", "readOnly", "writeOnly"}
)
"""JSON Schema keywords that describe a value without constraining it: edits to them are text-only."""

_NO_CALL_SHAPE = "no-call-shape"


def _digest(value: Any) -> str:
    return "shape:" + hashlib.sha256(canonical_bytes(value)).hexdigest()[:16]


def _constraints(schema: Any) -> Any:
    """``schema`` without annotation keywords, at every depth (property *names* are kept, whatever they are)."""
    if isinstance(schema, Mapping):
        kept: dict[str, Any] = {}
        for key, value in schema.items():
            if key in ANNOTATIONS:
                continue
            if key in ("properties", "patternProperties", "$defs", "definitions") and isinstance(value, Mapping):
                kept[key] = {name: _constraints(item) for name, item in value.items()}
            else:
                kept[key] = _constraints(value)
        return kept
    if isinstance(schema, list):
        return [_constraints(item) for item in schema]
    return schema


def tool_schema_revision(input_schema: Mapping[str, Any]) -> str:
    """The schema revision of a tool: a digest of its required parameters and their types (constraints only).

    Optional parameters and every annotation are left out, so text edits and optional additions keep it.
    Definitions (``$defs``) are included whole: a required parameter may refer to them.
    """
    properties = input_schema.get("properties")
    properties = properties if isinstance(properties, Mapping) else {}
    required = input_schema.get("required")
    names = sorted({name for name in required if isinstance(name, str)}) if isinstance(required, list) else []
    shape = {
        "required": {name: _constraints(properties.get(name, {})) for name in names},
        "defs": _constraints({key: input_schema[key] for key in ("$defs", "definitions") if key in input_schema}),
    }
    return _digest(shape)


def schema_revision_of(capability: Capability) -> str:
    """The schema revision of a catalog entry: a tool's required call shape; a constant for skills and resources."""
    if capability.kind in kinds_reached(Reach.TOOL_NAME) and capability.spec is not None:
        return tool_schema_revision(capability.spec.input_schema)
    return _digest(_NO_CALL_SHAPE)


def carries_over(*, stored_revision: str, stored_schema_revision: str, revision: str, schema_revision: str) -> bool:
    """Whether a sample stored for (``stored_revision``, ``stored_schema_revision``) counts for the capability
    (same identity) now at (``revision``, ``schema_revision``).

    The exact contract revision always counts; otherwise both schema revisions must be known and equal.
    """
    if stored_revision == revision:
        return True
    return bool(schema_revision) and stored_schema_revision == schema_revision


__all__ = ["ANNOTATIONS", "carries_over", "schema_revision_of", "tool_schema_revision"]
