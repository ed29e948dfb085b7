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

from . import foreign

INT_MIN = -(2**63)
INT_MAX = 2**64 - 1
MAX_DEPTH = 128
"""Containers nested deeper than this are refused (orjson stops at 254 and frames add two levels)."""

_NONE = type(None)

Link = tuple[Any, ...]
"""Where a value sits: ``(parent link, key or index)``, or ``(path,)`` at the root; a path string is built
only for the error, so checking a large value allocates one small tuple per element, not one path each."""


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


def _is_scalar(kind: type) -> bool:
    # Identity, never ``kind in _SCALARS``: that would call a hostile metaclass's ``__eq__``.
    return kind is str or kind is int or kind is float or kind is bool or kind is _NONE


def _describe(value: Any) -> str:
    # Only the real type and its MRO are consulted: ``isinstance`` would read a program-defined ``__class__``.
    kind = type(value)
    if kind is tuple:
        return "tuple is not JSON (use a list)"
    if issubclass(kind, bytes | bytearray | memoryview):
        return "bytes are not JSON (decode them to str first)"
    if issubclass(kind, dict):
        return f"{foreign.type_name(kind)} (a dict subclass) is not plain JSON"
    return f"{foreign.full_type_name(kind)} is not JSON"


def _path(link: Link) -> str:
    steps: list[Any] = []
    while len(link) == 2:
        link, step = link
        steps.append(step)
    parts = [str(link[0])]
    for step in reversed(steps):
        parts.append(f"[{step}]" if type(step) is int else f"[{foreign.clip(step, 60)!r}]")
    return "".join(parts)


def check(value: Any, path: str = "value") -> None:
    """Raise :class:`NotLossless` at the first part of ``value`` that is not lossless JSON.

    Iterative, so deep values cannot exhaust the interpreter stack. Runs no
    code of the value's own: only exact types are accepted and dict entries
    are read as pairs (a lookup would call a colliding key's ``__eq__``), so a
    hostile object is refused, never asked anything.
    """
    if _is_scalar(type(value)):
        problem = _scalar_problem(value)
        if problem is not None:
            raise NotLossless(path, problem)
        return
    if type(value) is dict and not value:
        return
    # Stack items: (value, link, depth, leaving); a "leaving" item ends a container's active span.
    active: set[int] = set()
    stack: list[tuple[Any, Link, int, bool]] = [(value, (path,), 0, False)]
    while stack:
        item, link, depth, leaving = stack.pop()
        if leaving:
            active.discard(id(item))
            continue
        kind = type(item)
        if _is_scalar(kind):
            problem = _scalar_problem(item)
            if problem is not None:
                raise NotLossless(_path(link), problem)
            continue
        if kind is not dict and kind is not list:
            raise NotLossless(_path(link), _describe(item))
        if depth >= MAX_DEPTH:
            raise NotLossless(_path(link), f"nested deeper than {MAX_DEPTH} levels")
        if id(item) in active:
            raise NotLossless(_path(link), "cycle: the value contains itself")
        active.add(id(item))
        stack.append((item, link, depth, True))
        if kind is dict:
            # A snapshot of the pairs: no key is hashed or compared, and a program thread
            # changing the dict meanwhile cannot make the walk fail halfway.
            for key, entry in reversed(list(item.items())):
                if type(key) is not str:
                    raise NotLossless(_path(link), f"key {foreign.describe_key(key)} is not a string")
                problem = _scalar_problem(key)
                if problem is not None:
                    raise NotLossless(_path(link), f"key: {problem}")
                stack.append((entry, (link, key), depth + 1, False))
        else:
            entries = list(item)
            for index in range(len(entries) - 1, -1, -1):
                stack.append((entries[index], (link, index), depth + 1, False))


def size_floor(value: Any, stop: int) -> int:
    """A lower bound of the bytes of ``value`` (already :func:`check`-ed) as compact JSON, counted without
    encoding it; the count ends as soon as it passes ``stop``.

    Each string counts its characters and quotes (UTF-8 and escapes only add), each other scalar one
    byte, each container its brackets and separators. A value whose floor passes a limit cannot fit
    it, and the encoding that would have failed for memory is never attempted.
    """
    total = 0
    stack: list[Any] = [value]
    while stack and total <= stop:
        item = stack.pop()
        kind = type(item)
        if kind is str:
            total += len(item) + 2
        elif kind is dict:
            pairs = list(item.items())
            total += 2 + max(0, len(pairs) - 1) + sum(len(key) + 3 for key, _ in pairs)
            stack.extend(entry for _, entry in pairs)
        elif kind is list:
            entries = list(item)
            total += 2 + max(0, len(entries) - 1)
            stack.extend(entries)
        else:
            total += 1
    return total


def dumps(value: Any, path: str = "value") -> bytes:
    """``check`` then encode compactly as UTF-8 JSON (the child's encoder; the host uses orjson)."""
    check(value, path)
    return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode("utf-8")
