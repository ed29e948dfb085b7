"""Lossless JSON: the one rule set for every value that crosses the control channel.

A value is lossless when it is made only of ``dict`` (string keys), ``list``,
``str`` (valid UTF-8, no lone surrogates), ``int`` within 64 bits
(``-2**63 <= i <= 2**64 - 1``, what orjson represents exactly; ADR 0011),
finite ``float``, ``bool`` and ``None`` — exact types, no subclasses, no
tuples, no cycles — and nests at most :data:`MAX_DEPTH` containers deep.
Anything else is refused with :class:`NotLossless`, never coerced.

Host and child both import this module, so the rules cannot drift apart.
"""

from __future__ import annotations

import json
import math
from typing import Any

INT_MIN = -(2**63)
INT_MAX = 2**64 - 1
MAX_DEPTH = 128
"""Containers nested deeper than this are refused (orjson stops at 254 and frames add two levels)."""

_SCALARS = (str, int, float, bool, type(None))


class NotLossless(TypeError):
    """A value that would not survive a JSON round trip unchanged.

    :ivar path: where in the value, e.g. ``value["rows"][3]``.
    :ivar reason: what is wrong there.
    """

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


def _scalar_problem(value: Any) -> str | None:
    kind = type(value)
    if kind is str:
        if not value.isascii():
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                return "string contains a lone surrogate"
        return None
    if kind is bool or value is None:
        return None
    if kind is int:
        if INT_MIN <= value <= INT_MAX:
            return None
        return "integer outside the 64-bit range (pass it as a string)"
    if kind is float:
        return None if math.isfinite(value) else f"float {value!r} is not JSON"
    return None


def _describe(value: Any) -> str:
    kind = type(value)
    if kind is tuple:
        return "tuple is not JSON (use a list)"
    if isinstance(value, bytes | bytearray | memoryview):
        return "bytes are not JSON (decode them to str first)"
    if isinstance(value, dict):
        return f"{kind.__name__} (a dict subclass) is not plain JSON"
    return f"{kind.__module__}.{kind.__qualname__} is not JSON"


def check(value: Any, path: str = "value") -> None:
    """Raise :class:`NotLossless` at the first part of ``value`` that is not lossless JSON.

    Iterative, so deep values cannot exhaust the interpreter stack.
    """
    if type(value) in _SCALARS:
        problem = _scalar_problem(value)
        if problem is not None:
            raise NotLossless(path, problem)
        return
    if type(value) is dict and not value:
        return
    # Stack items: (value, path, depth); an "exit" marker ends a container's active span.
    active: set[int] = set()
    stack: list[tuple[Any, str, int, bool]] = [(value, path, 0, False)]
    while stack:
        item, where, depth, leaving = stack.pop()
        if leaving:
            active.discard(id(item))
            continue
        kind = type(item)
        if kind in _SCALARS:
            problem = _scalar_problem(item)
            if problem is not None:
                raise NotLossless(where, problem)
            continue
        if kind is not dict and kind is not list:
            raise NotLossless(where, _describe(item))
        if depth >= MAX_DEPTH:
            raise NotLossless(where, f"nested deeper than {MAX_DEPTH} levels")
        if id(item) in active:
            raise NotLossless(where, "cycle: the value contains itself")
        active.add(id(item))
        stack.append((item, where, depth, True))
        if kind is dict:
            for key in reversed(list(item)):
                if type(key) is not str:
                    raise NotLossless(where, f"key {key!r} is not a string")
                problem = _scalar_problem(key)
                if problem is not None:
                    raise NotLossless(where, f"key: {problem}")
                stack.append((item[key], f"{where}[{key!r}]", depth + 1, False))
        else:
            for index in range(len(item) - 1, -1, -1):
                stack.append((item[index], f"{where}[{index}]", depth + 1, False))


def dumps(value: Any, path: str = "value") -> bytes:
    """``check`` then encode compactly as UTF-8 JSON (the child's encoder; the host uses orjson)."""
    check(value, path)
    return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode("utf-8")
