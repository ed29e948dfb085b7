"""The strict cattrs converter for config files and the canonical form.

TOML already has types, so structuring never coerces: ``"false"`` is not a
boolean and ``true`` is not an integer. Hooks raise :class:`Rejected` with
a reason key so :func:`ptc_plus.config.validate` can localize it.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from typing import Any

import cattrs
from cattrs.errors import IterableValidationError, IterableValidationNote


class Rejected(ValueError):
    """A value refused by a hook: ``reason`` is a ``config.reason.*`` key."""

    def __init__(self, reason: str, **params: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.params: Mapping[str, str] = params


def _exact(kind: type, expected: str) -> Callable[[Any, Any], Any]:
    def hook(value: Any, _: Any) -> Any:
        # bool is a subclass of int in Python; TOML keeps them apart, so do we.
        if isinstance(value, bool) is not (kind is bool) or not isinstance(value, kind):
            raise Rejected("type", expected=expected)
        return value

    return hook


def _number(value: Any, _: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise Rejected("type", expected="number")
    return float(value)


def _strings(value: Any, _: Any) -> tuple[str, ...]:
    if not isinstance(value, list):
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
    """A converter that refuses unknown keys and reports every problem with its path."""
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


CONVERTER = make_converter()
