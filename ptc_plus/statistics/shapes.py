"""Learned output shapes: the JSON *shape* of a tool's results, never a value (ADR 0102).

A shape is a small JSON Schema in a closed grammar, so the SDK renders it like
a published output schema and a reader can check it holds no value:

- a leaf: ``{"type": t}`` for ``null``, ``boolean``, ``integer``, ``number``, ``string``;
- JSON text in a string (an MCP tool's text content that parses as JSON):
  ``{"type": "string", "contentMediaType": "application/json", "contentSchema": S}``;
- an array: ``{"type": "array"}`` (only empty ones seen) or ``{"type": "array", "items": S}``;
- a record: ``{"type": "object", "properties": {key: S, ...}, "required": [keys in every result]}``;
- a mapping (keys are data): ``{"type": "object", "additionalProperties": S}`` (``{}`` for an empty one);
- a union: ``{"anyOf": [S, ...]}``, at most one member per type, in :data:`TYPES` order;
- unknown (beyond the depth or size bound): ``{}``.

No ``enum``, ``const``, lengths, formats, examples or defaults: nothing a value
could hide in. Keys are kept only when they look like field names
(:func:`field_name`); an object with a key that looks like data (an id, a
date, a number, an email, a path, text with spaces, too long) or with more
than :data:`MAX_PROPERTIES` keys is a mapping.

Merging (:func:`merge`) is a union: idempotent, commutative, and it only
widens, so a result that contradicts what was learned widens it and is
never refused.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

import orjson

MAX_DEPTH = 6
"""Levels of nesting kept below the result itself; deeper is unknown (``{}``)."""
MAX_PROPERTIES = 48
"""Keys an object may have and stay a record; more (over all results merged) make it a mapping."""
MAX_ITEMS = 64
"""Items of an array looked at for its item shape (a result's first ones)."""
MAX_NODES = 400
"""Schema nodes a shape may hold; a larger one is cut to a shallower depth until it fits."""
MAX_KEY_CHARS = 40
"""A key longer than this is data, not a field name."""
MAX_JSON_TEXT = 1 << 20
"""Characters of a text result parsed to learn it as JSON text; a longer one is learned as a plain string (a
whole file read is not parsed on the hot path)."""
JSON_TEXT = "application/json"

TYPES = ("null", "boolean", "integer", "number", "string", "array", "object")
"""Union members in this order (a canonical shape has one spelling)."""

ANY_SHAPE: dict[str, Any] = {}

_FIELD = re.compile(r"[A-Za-z_$@][A-Za-z0-9_\-.$:]*")
_DATA_LIKE = (
    re.compile(r".*[0-9]{4,}.*"),  # ids, dates, numbers, phone numbers
    re.compile(r".*[0-9a-fA-F]{8,}.*"),  # digests, uuids
    re.compile(r"[A-Za-z0-9]*[0-9][A-Za-z0-9]*[0-9][A-Za-z0-9]*[0-9].*"),  # digit-rich tokens (a1b2c3)
)


def field_name(key: str) -> bool:
    """Whether ``key`` looks like a field name a program may use (else the object is a mapping of data)."""
    if not key or len(key) > MAX_KEY_CHARS or not _FIELD.fullmatch(key):
        return False  # spaces, slashes (paths, URLs), '@' inside (emails), leading digits, non-ASCII text
    if "." in key or ":" in key:
        return False  # file names, hosts, times
    return not any(pattern.fullmatch(key) for pattern in _DATA_LIKE)


def derive(value: Any) -> dict[str, Any]:
    """The shape of one JSON value (a string holding a JSON object or array is JSON text)."""
    if isinstance(value, str):
        parsed = json_text(value)
        if parsed is not None:
            return _bounded({"type": "string", "contentMediaType": JSON_TEXT, "contentSchema": _derive(parsed, 0)})
    return _bounded(_derive(value, 0))


def json_text(value: str) -> Any | None:
    """The JSON object or array ``value`` holds (MCP text content), else ``None`` (plain text)."""
    head = value[:64].lstrip()
    if not head or head[0] not in "{[" or len(value) > MAX_JSON_TEXT:
        return None
    try:
        parsed = orjson.loads(value)
    except orjson.JSONDecodeError:
        return None
    return parsed if isinstance(parsed, dict | list) else None


def _derive(value: Any, depth: int) -> dict[str, Any]:
    if value is None:
        return {"type": "null"}
    if isinstance(value, bool):
        return {"type": "boolean"}
    if isinstance(value, int):
        return {"type": "integer"}
    if isinstance(value, float):
        return {"type": "number"}
    if isinstance(value, str):
        return {"type": "string"}
    if depth >= MAX_DEPTH:
        return {}
    if isinstance(value, list):
        items = [_derive(item, depth + 1) for item in value[:MAX_ITEMS]]
        return {"type": "array", "items": _merge_all(items)} if items else {"type": "array"}
    if isinstance(value, Mapping):
        keys = [k for k in value if isinstance(k, str)]
        if len(keys) > MAX_PROPERTIES or not all(field_name(k) for k in keys):
            values = [_derive(value[k], depth + 1) for k in keys[:MAX_ITEMS]]
            return {"type": "object", "additionalProperties": _merge_all(values) if values else {}}
        props = {k: _derive(value[k], depth + 1) for k in sorted(keys)}
        return {"type": "object", "properties": props, "required": sorted(keys)}
    return {}  # not JSON (a host value the converter would not pass): unknown, never its text


def merge(a: Mapping[str, Any] | None, b: Mapping[str, Any] | None) -> dict[str, Any]:
    """The union of two shapes (``None``: nothing learned yet)."""
    if a is None:
        return _bounded(dict(b)) if b is not None else {}
    if b is None:
        return _bounded(dict(a))
    return _bounded(_merge(a, b))


def merge_all(shapes: Iterable[Mapping[str, Any] | None]) -> dict[str, Any] | None:
    found: dict[str, Any] | None = None
    for shape in shapes:
        if shape is not None:
            found = merge(found, shape)
    return found


def _merge_all(shapes: list[dict[str, Any]]) -> dict[str, Any]:
    found = shapes[0]
    for shape in shapes[1:]:
        found = _merge(found, shape)
    return found


def _members(shape: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return list(shape["anyOf"]) if "anyOf" in shape else [shape]


def _merge(a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, Any]:
    if not a or not b:
        return {}  # unknown absorbs everything
    by_type: dict[str, dict[str, Any]] = {}
    for member in (*_members(a), *_members(b)):
        kind = member["type"]
        if kind in ("integer", "number") and (({"integer", "number"} - {kind}) & by_type.keys()):
            by_type.pop("integer", None)
            by_type["number"] = {"type": "number"}  # an integer is a number: one member
            continue
        known = by_type.get(kind)
        by_type[kind] = dict(member) if known is None else _merge_same(known, member)
    ordered = [by_type[t] for t in TYPES if t in by_type]
    return ordered[0] if len(ordered) == 1 else {"anyOf": ordered}


def _merge_same(a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, Any]:
    kind = a["type"]
    if kind == "string":
        if "contentSchema" in a and "contentSchema" in b:
            return {**a, "contentSchema": _merge(a["contentSchema"], b["contentSchema"])}
        return {"type": "string"}  # sometimes plain text: the text is not known to be JSON
    if kind == "array":
        if "items" not in a or "items" not in b:
            return dict(a if "items" in a else b)
        return {"type": "array", "items": _merge(a["items"], b["items"])}
    if kind == "object":
        if "properties" in a and "properties" in b:
            keys = set(a["properties"]) | set(b["properties"])
            if len(keys) <= MAX_PROPERTIES:
                props = {
                    k: _merge(a["properties"][k], b["properties"][k])
                    if k in a["properties"] and k in b["properties"]
                    else dict(a["properties"].get(k) or b["properties"][k])
                    for k in sorted(keys)
                }
                return {
                    "type": "object",
                    "properties": props,
                    "required": sorted(set(a["required"]) & set(b["required"])),
                }
        values = [v for side in (a, b) for v in _values(side)]
        return {"type": "object", "additionalProperties": _merge_all(values) if values else {}}
    return dict(a)


def _values(shape: Mapping[str, Any]) -> list[dict[str, Any]]:
    if "properties" in shape:
        return [dict(v) for v in shape["properties"].values()]
    extra = shape["additionalProperties"]
    return [dict(extra)] if extra else []


def nodes(shape: Mapping[str, Any]) -> int:
    """Schema nodes in ``shape`` (the size bound)."""
    count = 1
    for member in _members(shape) if shape else ():
        if "anyOf" in shape:
            count += nodes(member)
            continue
        for key in ("items", "contentSchema", "additionalProperties"):
            if isinstance(member.get(key), Mapping):
                count += nodes(member[key])
        for sub in (member.get("properties") or {}).values():
            count += nodes(sub)
    return count


def _cut(shape: Mapping[str, Any], depth: int) -> dict[str, Any]:
    if not shape:
        return {}
    if "anyOf" in shape:
        return {"anyOf": [_cut(m, depth) for m in shape["anyOf"]]}
    out = dict(shape)
    for key in ("items", "contentSchema", "additionalProperties"):
        if isinstance(out.get(key), Mapping):
            out[key] = _cut(out[key], depth - 1) if depth > 0 else {}
    if "properties" in out:
        out["properties"] = {k: _cut(v, depth - 1) if depth > 0 else {} for k, v in out["properties"].items()}
    return out


def _bounded(shape: dict[str, Any]) -> dict[str, Any]:
    depth = MAX_DEPTH + 1
    while nodes(shape) > MAX_NODES and depth > 0:
        depth -= 1
        shape = _cut(shape, depth)
    return shape


_SCALAR_TEXT = {"null": "None", "boolean": "bool", "integer": "int", "number": "float", "string": "str"}


def summary(shape: Mapping[str, Any], limit: int = 200) -> str:
    """A compact one-line type of ``shape`` for people (``ptc-plus stats``): ``{rate: float, tags?: [str]}``."""
    text = _summary(shape)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _summary(shape: Mapping[str, Any]) -> str:
    if not shape:
        return "any"
    if "anyOf" in shape:
        return " | ".join(_summary(m) for m in shape["anyOf"])
    kind = shape["type"]
    if kind == "string" and "contentSchema" in shape:
        return f"json({_summary(shape['contentSchema'])})"
    if kind == "array":
        return f"[{_summary(shape['items'])}]" if "items" in shape else "[]"
    if kind == "object":
        if "properties" in shape:
            required = set(shape["required"])
            fields = (f"{k}{'' if k in required else '?'}: {_summary(v)}" for k, v in shape["properties"].items())
            return "{" + ", ".join(fields) + "}"
        return "{str: " + _summary(shape["additionalProperties"]) + "}"
    return _SCALAR_TEXT.get(kind, "any")


class NotAShape(ValueError):
    """A stored shape outside the grammar (a foreign hand, or a value hidden in it)."""


def check(shape: Any, depth: int = 0) -> None:
    """:raises NotAShape: ``shape`` is not in the grammar of the module docstring."""
    if not isinstance(shape, dict):
        raise NotAShape("a shape is an object")
    if depth > MAX_DEPTH + 3:
        raise NotAShape("too deep")
    if not shape:
        return
    if "anyOf" in shape:
        members = shape["anyOf"]
        if set(shape) != {"anyOf"} or not isinstance(members, list) or len(members) < 2:
            raise NotAShape("a union has only anyOf with two or more members")
        kinds = [m.get("type") if isinstance(m, dict) else None for m in members]
        if any(k not in TYPES for k in kinds) or kinds != [t for t in TYPES if t in kinds]:
            raise NotAShape("union members are typed, one per type, in order")
        for member in members:
            check(member, depth)
        return
    kind = shape.get("type")
    allowed = {
        "null": {"type"},
        "boolean": {"type"},
        "integer": {"type"},
        "number": {"type"},
        "string": {"type", "contentMediaType", "contentSchema"},
        "array": {"type", "items"},
        "object": {"type", "properties", "required", "additionalProperties"},
    }.get(kind if isinstance(kind, str) else "")
    if allowed is None or not set(shape) <= allowed:
        raise NotAShape(f"unknown type or keys: {sorted(shape)}")
    if kind == "string" and len(shape) > 1:
        if shape.get("contentMediaType") != JSON_TEXT or "contentSchema" not in shape:
            raise NotAShape("JSON text names its media type and schema")
        check(shape["contentSchema"], depth + 1)
    if kind == "array" and "items" in shape:
        check(shape["items"], depth + 1)
    if kind == "object":
        if ("properties" in shape) == ("additionalProperties" in shape):
            raise NotAShape("an object is a record or a mapping")
        if "properties" in shape:
            props, required = shape["properties"], shape.get("required")
            if not isinstance(props, dict) or not isinstance(required, list):
                raise NotAShape("a record has properties and required")
            if len(props) > MAX_PROPERTIES or not all(isinstance(k, str) and field_name(k) for k in props):
                raise NotAShape("a record's keys are field names")
            if required != sorted(set(required)) or not set(required) <= set(props):
                raise NotAShape("required is a sorted subset of the keys")
            for sub in props.values():
                check(sub, depth + 1)
        else:
            if "required" in shape:
                raise NotAShape("a mapping has no required keys")
            check(shape["additionalProperties"], depth + 1)


__all__ = [
    "ANY_SHAPE",
    "JSON_TEXT",
    "MAX_DEPTH",
    "MAX_ITEMS",
    "MAX_NODES",
    "MAX_PROPERTIES",
    "NotAShape",
    "check",
    "derive",
    "field_name",
    "json_text",
    "merge",
    "merge_all",
    "nodes",
    "summary",
]
