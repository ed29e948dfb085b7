"""Lossless JSON values on the host side: the child's rules (ADR 0011) and the host's bounds (ADR 0051).

The rules live in :mod:`ptc_plus.runtime.worker.lossless`, which the child
imports too; :func:`check` is the host's name for them (used on values the
host produces: tool results, discovery answers).

What the child sends is decoded by orjson, which already refuses NaN,
infinities and lone surrogates, so for those values the host has two things
left to bound, both before they cost it much:

- **Nodes**: every container, scalar and key of a frame is charged
  :data:`NODE_BYTES`; a frame weighs ``max(bytes, nodes * NODE_BYTES)`` and
  may weigh at most ``max_message_bytes``. :func:`count_nodes` counts the raw
  bytes *before* decoding (a C-speed scan), so a frame of millions of empty
  lists is refused without allocating them.
- **Depth**: :func:`check_depth` walks only the containers of a decoded
  value (bounded by the node count) and refuses nesting deeper than
  :data:`MAX_DEPTH`, the child's own limit.
"""

from __future__ import annotations

import re
from itertools import chain, compress
from typing import Any

from ptc_plus.runtime.worker.lossless import INT_MAX, INT_MIN, MAX_DEPTH, NotLossless, check

__all__ = [
    "INT_MAX",
    "INT_MIN",
    "MAX_DEPTH",
    "NODE_BYTES",
    "NotLossless",
    "check",
    "check_depth",
    "count_nodes",
    "node_budget",
]

NODE_BYTES = 32
"""What one decoded JSON node (container, scalar or key) is charged, in bytes of the frame's weight.

About what a node costs the host once decoded (a pointer plus a small object;
an empty list is 56 bytes, a small int 0), so a frame's weight bounds both the
memory and the time its decoding takes: at ``max_message_bytes`` = 128 MiB,
4 Mi nodes, about 0.6 s and 270 MB in the worst shape (empty lists)."""

_EXACT_ABOVE = 4096
"""Frames whose cheap node count is at most this keep it (the call hot path); above, strings are skipped."""

_STRING = re.compile(rb'"(?<=[\[{,:\s]")(?:[^"\\]++|\\.)*+"', re.DOTALL)
"""A JSON string token: what orjson reads as one string, brackets and commas inside included.

Linear on any input: the quantifiers never backtrack, and a string may only
start where JSON lets one start (a quote after ``[ { , :`` or white space, the
quote first so the engine can skip to it), so after one start that finds no
closing quote no later quote can start one either."""

_STRUCTURE = (b"[", b"{", b",", b":")


def node_budget(max_message_bytes: int) -> int:
    """Nodes one frame (or all pending requests together) may decode to."""
    return max_message_bytes // NODE_BYTES


def count_nodes(data: bytes | bytearray, limit: int, start: int = 0, end: int | None = None) -> int:
    """An upper bound on the JSON nodes (containers, scalars, keys) in ``data[start:end]``.

    Every node but the first is a container or follows a ``,`` or a ``:``
    inside one, so counting those four bytes bounds the nodes from above (an
    empty container counts once too many). That over-counts bytes inside
    strings; when the count exceeds ``_EXACT_ABOVE`` the strings are cut out
    first and the rest counted. Cutting out costs
    about 170 bytes per string, so it is done only for at most ``limit // 4``
    strings (more strings than that keep the over-count; more than ``limit``
    strings are more than ``limit`` nodes). Strings are counted from quotes
    not preceded by a backslash: at least one per string, at most two. Never
    decodes.
    """
    stop = len(data) if end is None else end
    count = data.count
    cheap = (
        1 + count(b"[", start, stop) + count(b"{", start, stop) + count(b",", start, stop) + count(b":", start, stop)
    )
    if cheap <= _EXACT_ABOVE:
        return cheap
    unescaped = data.count(b'"', start, stop) - data.count(b'\\"', start, stop)
    if unescaped // 2 > limit:
        return unescaped // 2
    if unescaped == 0 or unescaped > limit // 4:
        return cheap
    with memoryview(data) as whole, whole[start:stop] as body:
        stripped = _STRING.sub(b"", body)
    return 1 + sum(stripped.count(mark) for mark in _STRUCTURE)


def check_depth(value: Any, path: str = "value") -> None:
    """Refuse a decoded value whose containers nest deeper than :data:`MAX_DEPTH` (as the child does).

    Walks the value one level at a time with C-level iteration (``map``,
    ``compress``, ``chain``): about 50 ns per node, so a frame's node budget
    bounds it (4 Mi nodes, about 0.2 s). Only for values decoded from JSON
    (exact ``list``/``dict``, string keys).

    :raises NotLossless: too deep.
    """
    if type(value) is not list and type(value) is not dict:
        return
    level: list[Any] = [value]
    for _ in range(MAX_DEPTH):
        types = list(map(type, level))
        lists = compress(level, map(_IS_LIST, types))
        dicts = compress(level, map(_IS_DICT, types))
        entries = list(chain(chain.from_iterable(lists), chain.from_iterable(map(dict.values, dicts))))
        level = list(compress(entries, map(_IS_CONTAINER, map(type, entries))))
        if not level:
            return
    raise NotLossless(path, f"nested deeper than {MAX_DEPTH} levels")


_IS_LIST = frozenset({list}).__contains__
_IS_DICT = frozenset({dict}).__contains__
_IS_CONTAINER = frozenset({list, dict}).__contains__
