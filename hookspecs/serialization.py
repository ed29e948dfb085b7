"""The one serialization rule set of host and plugin for persisted payloads (cattrs + orjson).

Everything written to disk and read back goes through it: the reference
host's session logs, the plugin's session records (the capability
environment), plans, config files and the keyword index. Structuring never
coerces (``"false"`` is not a boolean, ``true`` is not an integer), refuses
unknown keys and reports every problem with its path
(``cattrs.transform_error``). Every persisted payload type carries an
integer ``version``; readers refuse versions they do not know instead of
guessing. :func:`canonical_bytes` gives canonical bytes: equal values,
identical bytes (ADR 0036, ADR 0058).

It lives in the contract package, the lowest layer, so the host and every
plugin can share it.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import attrs
import cattrs
import orjson
from cattrs.errors import IterableValidationError, IterableValidationNote

T = TypeVar("T")


class Rejected(ValueError):
    """A value refused by a structuring hook.

    ``reason`` is a short code (``type``, ``choice``) with ``params``; the plugin's
    config validation renders it as its ``config.reason.<reason>`` message.
    """

    def __init__(self, reason: str, **params: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.params: Mapping[str, str] = params


def _exact(kind: type, expected: str) -> Callable[[Any, Any], Any]:
    def hook(value: Any, _: Any) -> Any:
        # bool is a subclass of int in Python; TOML and JSON keep them apart, so do we.
        if isinstance(value, bool) is not (kind is bool) or not isinstance(value, kind):
            raise Rejected("type", expected=expected)
        return value

    return hook


def _number(value: Any, _: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise Rejected("type", expected="number")
    return float(value)


def _strings(value: Any, _: Any) -> tuple[str, ...]:
    if not isinstance(value, list | tuple):
        raise Rejected("type", expected="array-of-strings")
    problems: list[Exception] = []
    for index, item in enumerate(value):
        if not isinstance(item, str):
            problem = Rejected("type", expected="string")
            problem.__notes__ = [IterableValidationNote(f"item @ index {index}", index, str)]
            problems.append(problem)
    if problems:
        raise IterableValidationError("invalid items", problems, tuple[str, ...])
    return tuple(value)


def _enum(value: Any, kind: type[enum.Enum]) -> enum.Enum:
    choices = ", ".join(str(member.value) for member in kind)
    if not isinstance(value, str):
        raise Rejected("choice", choices=choices)
    try:
        return kind(value)
    except ValueError:
        # The string given, so a reader can suggest the nearest choice ("sesion" → "session").
        raise Rejected("choice", choices=choices, given=value) from None


def _make_converter() -> cattrs.Converter:
    """A strict converter: no coercion, no unknown keys, every problem with its path."""
    converter = cattrs.Converter(detailed_validation=True, forbid_extra_keys=True)
    converter.register_structure_hook(str, _exact(str, "string"))
    converter.register_structure_hook(bool, _exact(bool, "boolean"))
    converter.register_structure_hook(int, _exact(int, "integer"))
    converter.register_structure_hook(float, _number)
    converter.register_structure_hook_func(lambda t: t == tuple[str, ...], _strings)
    # Dispatch follows the MRO, and a StrEnum is also a str: name StrEnum so it wins.
    converter.register_structure_hook(enum.StrEnum, _enum)
    converter.register_unstructure_hook(enum.StrEnum, lambda member: member.value)
    return converter


converter = _make_converter()
"""The one converter (strict); use :func:`structure` and :func:`unstructure` unless a hook needs it."""


def unstructure(value: Any) -> Any:
    return converter.unstructure(value)


def structure(data: Any, cls: type[T]) -> T:
    """Raises ``cattrs`` errors (grouped, with paths) on shape mismatch, wrong types or unknown keys."""
    return converter.structure(data, cls)


def canonical_bytes(value: Any, *, indent: bool = False) -> bytes:
    """Canonical JSON bytes of ``value`` (an attrs value or plain JSON): sorted keys, no whitespace.

    ``indent=True`` is for files people edit and diff (two-space indent, still sorted and deterministic);
    hashes and logs use the compact form.
    """
    option = orjson.OPT_SORT_KEYS | (orjson.OPT_INDENT_2 if indent else 0)
    if not attrs.has(type(value)):
        try:
            # Plain JSON (a session log event) needs no unstructuring, which costs ~30x orjson on large values.
            return orjson.dumps(value, option=option)
        except TypeError:
            pass  # attrs values nested in plain containers: unstructure them
    return orjson.dumps(converter.unstructure(value), option=option)


def detached(value: Any) -> Any:
    """A deep, JSON-only copy: later mutation of ``value`` cannot alter what was logged."""
    return orjson.loads(orjson.dumps(value))


__all__ = ["Rejected", "canonical_bytes", "converter", "detached", "structure", "unstructure"]
