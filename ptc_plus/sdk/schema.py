"""Reading one JSON Schema document: local ``$ref`` resolution and keyword helpers.

Only local references (``#``, ``#/$defs/X``, ``#/definitions/X``, any JSON
pointer into the same document) are followed; anything else renders as
``Any``. The SDK describes; the host still validates against the full schema.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import unquote

import attrs

# Canonical order of JSON types when a schema lists several (`["null", "string"]`):
# the list is a set in meaning, so its written order must not change the output.
TYPE_ORDER = ("string", "integer", "number", "boolean", "array", "object", "null")


@attrs.frozen(kw_only=True)
class Document:
    """One schema document: the root that local ``$ref`` pointers resolve against.

    ``role`` tells input (``arguments``) from output (``result``) documents;
    references are keyed by ``(role, pointer)``.
    """

    root: Any = attrs.field(eq=False)
    role: str

    def resolve(self, ref: str) -> tuple[str, Any] | None:
        """``(pointer, schema)`` for a local reference, ``None`` when it cannot be followed."""
        if not ref.startswith("#"):
            return None
        pointer = unquote(ref[1:])
        if pointer and not pointer.startswith("/"):
            return None  # named anchors are not supported
        node: Any = self.root
        for raw in pointer.split("/")[1:]:
            part = raw.replace("~1", "/").replace("~0", "~")
            if isinstance(node, Mapping) and part in node:
                node = node[part]
            elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            else:
                return None
        return pointer, node


def ref_name(pointer: str) -> str:
    """The last segment of a pointer (``/$defs/TimeResult`` → ``TimeResult``); empty for the root."""
    return pointer.rsplit("/", 1)[-1].replace("~1", "/").replace("~0", "~") if pointer else ""


def schema_types(schema: Mapping[str, Any]) -> list[str]:
    """The ``type`` keyword as a canonically ordered list (unknown names dropped)."""
    raw = schema.get("type")
    names = [raw] if isinstance(raw, str) else [t for t in raw if isinstance(t, str)] if isinstance(raw, list) else []
    listed = [t for t in TYPE_ORDER if t in names]
    if schema.get("nullable") is True and "null" not in listed:
        listed.append("null")
    return listed


def is_object_schema(schema: Any) -> bool:
    """True for a schema that describes an object with declared properties."""
    if not isinstance(schema, Mapping):
        return False
    types = schema_types(schema)
    has_props = isinstance(schema.get("properties"), Mapping) and bool(schema["properties"])
    return has_props and (not types or types == ["object"])


def required_names(schema: Mapping[str, Any]) -> list[str]:
    """``required`` as a sorted, de-duplicated list of strings."""
    raw = schema.get("required")
    return sorted({r for r in raw if isinstance(r, str)}) if isinstance(raw, list) else []


def properties(schema: Mapping[str, Any]) -> dict[str, Any]:
    """``properties`` with string keys, in sorted order (object key order carries no meaning)."""
    raw = schema.get("properties")
    if not isinstance(raw, Mapping):
        return {}
    return {k: raw[k] for k in sorted(k for k in raw if isinstance(k, str))}
