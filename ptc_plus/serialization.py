"""The plugin's one serialization layer for persisted and wire payloads (cattrs + orjson).

One rule set for everything the plugin reads back: config files, the
session's capability environment record, plans. Structuring never coerces
(``"false"`` is not a boolean, ``true`` is not an integer), refuses unknown
keys and reports every problem with its path (``cattrs.transform_error``).
Every persisted payload type carries an integer ``version``; readers refuse
versions they do not know instead of guessing. :func:`dumps` gives canonical
bytes: equal values, identical bytes (ADR 0036).
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import cattrs
import orjson
from cattrs.errors import IterableValidationError, IterableValidationNote

T = TypeVar("T")


class Rejected(ValueError):
    """A value refused by a structuring hook: ``reason`` is a ``config.reason.*`` key."""

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
        raise Rejected("choice", choices=choices) from None


def make_converter() -> cattrs.Converter:
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


converter = make_converter()


def unstructure(value: Any) -> Any:
    return converter.unstructure(value)


def structure(data: Any, cls: type[T]) -> T:
    """Raises ``cattrs`` errors (grouped, with paths) on shape mismatch, wrong types or unknown keys."""
    return converter.structure(data, cls)


def dumps(value: Any) -> bytes:
    """Canonical JSON bytes of ``value`` (an attrs value or plain JSON): sorted keys, no whitespace."""
    return orjson.dumps(converter.unstructure(value), option=orjson.OPT_SORT_KEYS)
