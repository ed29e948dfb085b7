"""A direct check for the plain input schemas most tools have, equal to jsonschema's verdict (ADR 0123).

jsonschema's validator costs tens of microseconds per call even for ``{"type": "object"}`` with a property
or two, a large share of a nested call's host time. :func:`plain_check` compiles a schema made only of
``type`` (one name), ``properties`` (each a plain schema again), ``required`` and a boolean
``additionalProperties`` (plus annotations such as ``description``) into a function answering what
``Draft202012Validator(schema).is_valid(instance)`` answers; any other keyword, a ``$schema``, a list of
types, returns ``None`` and the caller uses jsonschema alone. The check only short-cuts *valid* arguments:
the messages for invalid ones still come from jsonschema (:func:`hookspecs.reference.registry.validation_errors`).
``tests/hookspecs/reference/test_plain_schema.py`` compares both over generated schemas and instances.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Mapping
from typing import Any

Check = Callable[[Any], bool]

ANNOTATIONS = frozenset(
    {"title", "description", "default", "examples", "$comment", "deprecated", "readOnly", "writeOnly"}
)
"""Keywords that never change a verdict."""
_COVERED = frozenset({"type", "properties", "required", "additionalProperties"}) | ANNOTATIONS


def _is_integer(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and value.is_integer())


def _is_number(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, numbers.Number)


_TYPES: dict[str, Check] = {
    "array": lambda value: isinstance(value, list),
    "boolean": lambda value: isinstance(value, bool),
    "integer": _is_integer,
    "null": lambda value: value is None,
    "number": _is_number,
    "object": lambda value: isinstance(value, dict),
    "string": lambda value: isinstance(value, str),
}
"""Draft 2020-12's type checker (jsonschema's ``draft202012_type_checker``)."""


def plain_check(schema: Any) -> Check | None:
    """A function equal to jsonschema's verdict on ``schema`` (Draft 2020-12), or ``None`` if not covered."""
    if schema is True or schema == {}:
        return lambda value: True
    if not isinstance(schema, Mapping) or not set(schema) <= _COVERED:
        return None
    kind = schema.get("type")
    if kind is not None and (not isinstance(kind, str) or kind not in _TYPES):
        return None
    properties = schema.get("properties", {})
    required = schema.get("required", [])
    extra = schema.get("additionalProperties", True)
    if not isinstance(properties, Mapping) or not isinstance(required, list) or not isinstance(extra, bool):
        return None
    if not all(isinstance(name, str) for name in (*properties, *required)):
        return None
    checks: dict[str, Check] = {}
    for name, sub in properties.items():
        check = plain_check(sub)
        if check is None:
            return None
        checks[name] = check
    type_check = _TYPES[kind] if kind is not None else None
    names = tuple(dict.fromkeys(required))

    def valid(value: Any) -> bool:
        if type_check is not None and not type_check(value):
            return False
        if not isinstance(value, dict):  # the object keywords say nothing about other values
            return True
        for name in names:
            if name not in value:
                return False
        for name, item in value.items():
            check = checks.get(name)
            if check is None:
                if not extra:
                    return False
            elif not check(item):
                return False
        return True

    return valid
