"""The control protocol, host side: frame encoding and validation of everything the child sends.

Frames are a 4-byte big-endian length and an orjson object with a ``type``.
Child → host: ``ready`` (first, once), ``call``, ``discover``, ``repl``
(kernel mode), ``log``, ``done`` (last; in kernel mode the last of a cell,
carrying ``volatile``). Host → child: ``boot`` (once, after ``ready``), ``reply``
(answering a ``call`` or a ``discover`` by id). Every child frame is checked
here: size, JSON, shape, types, and for ``discover`` the method name and its
argument names (ADR 0017). State checks (ids, pending count, tool names) live
in :mod:`ptc_plus.runtime.run`. Any violation raises
:class:`ProtocolViolation`, which ends the run with outcome ``protocol``.

Values are bounded before they cost the host much (ADR 0051): a frame's
nodes are counted on its raw bytes before it is decoded, and its value's
depth is checked right after; a frame over either bound raises
:class:`ValueRefused`, which ends the run with outcome ``invalid-output``.
"""

from __future__ import annotations

import gc
import struct
from collections.abc import Mapping
from typing import Any

import attrs
import orjson

from hookspecs import JSONValue
from ptc_plus.i18n import message as localized
from ptc_plus.runtime import values

HEADER = struct.Struct(">I")
VERSION = 1
LOG_STREAMS = frozenset({"stdout", "stderr", "log"})
DISCOVERY_METHODS: Mapping[str, frozenset[str]] = {
    "search": frozenset({"query", "budget", "limit"}),
    "find": frozenset({"query", "limit"}),
    "inspect": frozenset({"names", "budget"}),
    "tree": frozenset({"limit"}),
}
"""The fixed set of ``capabilities.*`` methods and the argument names each may carry."""
REPL_OPS = frozenset({"save", "restore", "list", "delete"})
"""The state operations of a kernel-mode ``repl`` frame."""
MAX_STATE_NAME = 200
"""The longest state name a ``repl`` frame may carry."""
_PAUSE_ABOVE = 1 << 16
"""Frames with more nodes than this are decoded with the garbage collector paused."""


class ProtocolViolation(Exception):
    """The child broke the protocol: ``reason`` names how (locale ``runtime.protocol.<reason>``, with
    ``params``); ``detail`` is that message in the current locale (for the run's error message)."""

    def __init__(self, reason: str, **params: object) -> None:
        detail = localized(f"runtime.protocol.{reason}", None, **params)
        super().__init__(detail)
        self.key = reason
        self.params = params
        self.detail = detail


class ValueRefused(ProtocolViolation):
    """A frame's value is over the host's bounds (too many nodes, nested too deep): ``invalid-output``."""


@attrs.frozen(kw_only=True)
class Ready:
    pid: int


@attrs.frozen(kw_only=True)
class Call:
    id: int
    tool: str
    args: dict[str, JSONValue]
    size: int
    """The frame's weight (bytes, or nodes times ``NODE_BYTES`` if more), counted against the pending bytes."""


@attrs.frozen(kw_only=True)
class Discover:
    """A ``capabilities.<method>(...)`` request: served by the host, never dispatched as a tool."""

    id: int
    method: str
    args: dict[str, JSONValue]
    size: int
    """The frame's weight (bytes, or nodes times ``NODE_BYTES`` if more), counted against the pending bytes."""


@attrs.frozen(kw_only=True)
class Repl:
    """A kernel-mode state operation (``repl.save/restore/list/delete``): answered by the run's
    :data:`~ptc_plus.runtime.run.ReplHandler`, sharing the id sequence and pending limits with calls."""

    id: int
    op: str
    name: str | None
    volatile: tuple[str, str] | None
    """The cell's first OS-touching event so far, ``(kind, detail)``."""
    size: int


@attrs.frozen(kw_only=True)
class Log:
    entries: tuple[tuple[str, str], ...]


@attrs.frozen(kw_only=True)
class Done:
    ok: bool
    value: JSONValue = None
    """Decoded by orjson and depth-checked: lossless (ADR 0011, 0051)."""
    error: dict[str, JSONValue] | None = None
    volatile: tuple[str, str] | None = None
    """Kernel mode: the first OS-touching event of the cell, ``(kind, detail)``."""


ChildFrame = Ready | Call | Discover | Repl | Log | Done


def encode(message: dict[str, Any]) -> bytes:
    body = orjson.dumps(message)
    return HEADER.pack(len(body)) + body


def frame_length(buffer: bytes | bytearray, offset: int, max_message_bytes: int) -> int:
    """The body length announced by the header at ``offset``; refused before the body is read."""
    (length,) = HEADER.unpack_from(buffer, offset)
    if length > max_message_bytes:
        raise ProtocolViolation("frame_too_large", size=length, limit=max_message_bytes)
    return int(length)


def parse(data: bytes | bytearray, max_message_bytes: int, start: int = 0, end: int | None = None) -> ChildFrame:
    """Bound, decode and shape-check the child frame ``data[start:end]`` (read in place, not copied).

    :raises ValueRefused: more nodes than ``max_message_bytes`` pays for, or a value nested too deep.
    :raises ProtocolViolation: anything else wrong with the frame.
    """
    stop = len(data) if end is None else end
    size = stop - start
    budget = values.node_budget(max_message_bytes)
    nodes = values.count_nodes(data, budget, start, stop)
    if nodes > budget:
        raise ValueRefused("value_nodes", limit=budget)
    # No cyclic garbage collection while a large frame is decoded: every list orjson creates is
    # tracked, and the collections its allocations trigger walk them all again (4 Mi empty lists:
    # 0.6 s with the collector, 0.2 s without). It runs as usual afterwards.
    paused = nodes > _PAUSE_ABOVE and gc.isenabled()
    if paused:
        gc.disable()
    try:
        with memoryview(data) as whole, whole[start:stop] as body:
            message = orjson.loads(body)
    except orjson.JSONDecodeError as error:
        raise ProtocolViolation("not_json", detail=str(error)) from None
    finally:
        if paused:
            gc.enable()
    if not isinstance(message, dict):
        raise ProtocolViolation("not_object")
    kind = message.get("type")
    weight = max(size, nodes * values.NODE_BYTES)
    if kind == "ready":
        # The child runs its own copy of worker/ (a spare started before an upgrade, another install's
        # interpreter): one speaking another version is refused before boot, not misread (ADR 0057).
        version = _int(message, "version")
        if version != VERSION:
            raise ProtocolViolation("version_mismatch", version=version, expected=VERSION)
        return Ready(pid=_int(message, "pid"))
    # Fewer containers than the depth limit cannot nest deeper than it: most frames skip the walk.
    shallow = (
        nodes <= values.MAX_DEPTH or data.count(b"[", start, stop) + data.count(b"{", start, stop) <= values.MAX_DEPTH
    )
    if kind == "call":
        return _checked(_call(message, weight), shallow)
    if kind == "discover":
        return _checked(_discover(message, weight), shallow)
    if kind == "repl":
        return _repl(message, weight)
    if kind == "log":
        return _log(message)
    if kind == "done":
        return _checked(_done(message), shallow)
    raise ProtocolViolation("unknown_type", type=kind)


def _checked(frame: Call | Discover | Done, shallow: bool) -> Call | Discover | Done:
    if shallow:
        return frame
    value, path = (frame.args, "arguments") if not isinstance(frame, Done) else (frame.value, "value")
    if isinstance(frame, Done) and not frame.ok:
        value, path = frame.error, "error"
    try:
        values.check_depth(value, path)
    except values.NotLossless as error:
        raise ValueRefused("value_depth", frame=type(frame).__name__.lower(), detail=str(error)) from None
    return frame


def _int(message: dict[str, Any], key: str) -> int:
    value = message.get(key)
    if type(value) is not int:
        raise ProtocolViolation("not_integer", frame=message.get("type"), field=key)
    return value


def _call(message: dict[str, Any], size: int) -> Call:
    tool = message.get("tool")
    args = message.get("args")
    if not isinstance(tool, str):
        raise ProtocolViolation("tool_not_text")
    if not isinstance(args, dict):
        raise ProtocolViolation("args_not_object", frame="call")
    return Call(id=_int(message, "id"), tool=tool, args=args, size=size)


def _discover(message: dict[str, Any], size: int) -> Discover:
    method = message.get("method")
    args = message.get("args")
    allowed = DISCOVERY_METHODS.get(method) if isinstance(method, str) else None
    if allowed is None or not isinstance(method, str):
        raise ProtocolViolation("unknown_method", method=method)
    if not isinstance(args, dict):
        raise ProtocolViolation("args_not_object", frame="discover")
    unknown = sorted(key for key in args if key not in allowed)
    if unknown:
        raise ProtocolViolation("unknown_argument", method=method, name=unknown[0])
    return Discover(id=_int(message, "id"), method=method, args=args, size=size)


def _repl(message: dict[str, Any], size: int) -> Repl:
    op = message.get("op")
    name = message.get("name")
    if not isinstance(op, str) or op not in REPL_OPS:
        raise ProtocolViolation("repl_op", op=op)
    if name is not None and not (isinstance(name, str) and len(name) <= MAX_STATE_NAME):
        raise ProtocolViolation("repl_name", limit=MAX_STATE_NAME)
    return Repl(id=_int(message, "id"), op=op, name=name, volatile=_volatile(message, "repl"), size=size)


def _volatile(message: dict[str, Any], frame: str) -> tuple[str, str] | None:
    volatile = message.get("volatile")
    if volatile is None:
        return None
    if isinstance(volatile, dict) and set(volatile) == {"kind", "detail"}:
        kind, detail = volatile["kind"], volatile["detail"]
        if isinstance(kind, str) and isinstance(detail, str):
            return kind, detail
    raise ProtocolViolation("volatile_shape", frame=frame)


def _log(message: dict[str, Any]) -> Log:
    entries = message.get("entries")
    if not isinstance(entries, list):
        raise ProtocolViolation("log_entries")
    checked: list[tuple[str, str]] = []
    for entry in entries:
        if not (isinstance(entry, list) and len(entry) == 2 and entry[0] in LOG_STREAMS and isinstance(entry[1], str)):
            raise ProtocolViolation("log_entry")
        checked.append((entry[0], entry[1]))
    return Log(entries=tuple(checked))


def _done(message: dict[str, Any]) -> Done:
    ok = message.get("ok")
    volatile = _volatile(message, "done")
    if ok is True:
        return Done(ok=True, value=message.get("value"), volatile=volatile)
    error = message.get("error")
    if ok is not False or not isinstance(error, dict) or not isinstance(error.get("kind"), str):
        raise ProtocolViolation("done_shape")
    return Done(ok=False, error=error, volatile=volatile)
