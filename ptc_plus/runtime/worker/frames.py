"""Frames on the control channel, child side: a 4-byte big-endian length, then a JSON object.

The host writes with orjson and the child with :mod:`json`; both obey
:mod:`.lossless`, so the bytes mean the same on both ends.

A reply the child cannot hold or decode (``MemoryError``: the program's
memory cap) is not lost: :class:`FrameBuffer` skips the rest of it and yields
an :class:`Unreadable` naming the request it answered, read from the frame's
first bytes (the host writes ``{"type":"reply","id":N,`` first), so that one
call fails instead of the program waiting for it forever (ADR 0051).
"""

from __future__ import annotations

import json
import json.encoder
import os
import re
import select
import struct
from collections.abc import Callable
from typing import Any

HEADER = struct.Struct(">I")
_ENCODER = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":"))
_DECODER = json.JSONDecoder()
_SCAN: Callable[[str, int], tuple[Any, int]] = _DECODER.scan_once  # type: ignore[attr-defined]


def _chunks_encoder() -> Callable[[Any, int], Any] | None:
    # json's C encoder built once: JSONEncoder.encode rebuilds it (and a Python closure) on every
    # call, which was a tenth of the child's work per nested call. No circular-reference markers:
    # every message is lossless-checked (cycles refused) or made of strings only.
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:
        return None
    encoder: Callable[[Any, int], Any] = make(
        None, _ENCODER.default, json.encoder.encode_basestring, None, ":", ",", False, False, False
    )
    return encoder


_CHUNKS = _chunks_encoder()

_REPLY_ID = re.compile(rb'\{"type":"reply","id":(\d{1,20})[,}]')
_HEAD = 64
"""Bytes of a frame's body kept to name it when the rest cannot be held."""


class Unreadable:
    """A frame that arrived but could not be held or decoded (``MemoryError``).

    :ivar id: the request it replies to, or ``None`` if its first bytes do not say.
    :ivar size: its body's length in bytes.
    """

    __slots__ = ("id", "size")

    def __init__(self, head: bytes, size: int) -> None:
        match = _REPLY_ID.match(head)
        self.id = int(match.group(1)) if match else None
        self.size = size

    def __repr__(self) -> str:
        return f"Unreadable(id={self.id}, size={self.size})"


def decode(body: bytes | bytearray | memoryview) -> dict[str, Any]:
    """One frame body (UTF-8 JSON object) as a dict."""
    return decode_text(str(body, "utf-8"))


def decode_text(text: str) -> dict[str, Any]:
    """One frame body, already decoded from UTF-8, as a dict."""
    # The scanner directly: JSONDecoder.decode adds two whitespace regex passes the host never needs.
    try:
        message, end = _SCAN(text, 0)
    except StopIteration:
        end = -1
    if end != len(text) or type(message) is not dict:
        message = _DECODER.decode(text)  # not what the host sends: let json say what is wrong
    result: dict[str, Any] = message
    return result


def encode(message: dict[str, Any]) -> bytes:
    """One frame holding ``message`` (already known to be lossless)."""
    text = "".join(_CHUNKS(message, 0)) if _CHUNKS is not None else _ENCODER.encode(message)
    body = text.encode("utf-8")
    return HEADER.pack(len(body)) + body


def write_all(fd: int, data: bytes) -> None:
    """Write every byte of ``data`` to ``fd``, waiting while it is full even if it is non-blocking.

    The channel may be one socket for both directions (ADR 0128): the reader's
    non-blocking mode is then the writer's too, and a full send buffer must wait,
    not fail the write.
    """
    view = memoryview(data)
    while view:
        try:
            written = os.write(fd, view)
        except BlockingIOError:
            _writable(fd)
            continue
        view = view[written:]


def _writable(fd: int) -> None:
    poller = select.poll()
    poller.register(fd, select.POLLOUT)
    poller.poll()


def read_frame(fd: int) -> dict[str, Any] | None:
    """Block until one whole frame arrives; ``None`` when the host closed the channel."""
    header = _read_exact(fd, HEADER.size)
    if header is None:
        return None
    (length,) = HEADER.unpack(header)
    body = _read_exact(fd, length)
    if body is None:
        return None
    return decode(body)


def _read_exact(fd: int, count: int) -> bytes | None:
    chunks: list[bytes] = []
    while count:
        chunk = os.read(fd, min(count, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        count -= len(chunk)
    return b"".join(chunks)


class FrameBuffer:
    """Accumulates bytes read without blocking and yields whole frames (or :class:`Unreadable` ones)."""

    def __init__(self) -> None:
        self._data = bytearray()
        self._skip = 0
        """Bytes of an unreadable frame still to be discarded as they arrive."""
        self._skipped: Unreadable | None = None

    def feed(self, chunk: bytes) -> list[dict[str, Any] | Unreadable]:
        frames: list[dict[str, Any] | Unreadable] = []
        if self._skip:
            taken = min(self._skip, len(chunk))
            self._skip -= taken
            if self._skip:
                return frames
            assert self._skipped is not None
            frames.append(self._skipped)
            self._skipped = None
            chunk = chunk[taken:]
        if not self._data and len(chunk) >= HEADER.size:
            # The usual case: nothing buffered and the chunk is exactly one frame.
            (length,) = HEADER.unpack_from(chunk)
            if len(chunk) == HEADER.size + length:
                frames.append(_decoded(chunk, HEADER.size, len(chunk)))
                return frames
        try:
            self._data += chunk
        except MemoryError:
            return frames + self._give_up(chunk)
        while len(self._data) >= HEADER.size:
            (length,) = HEADER.unpack_from(self._data)
            end = HEADER.size + length
            if len(self._data) < end:
                break
            frames.append(self._take(end))
        return frames

    def _take(self, end: int) -> dict[str, Any] | Unreadable:
        data = self._data
        head = bytes(data[HEADER.size : HEADER.size + _HEAD])
        text: str | None = None
        try:
            with memoryview(data) as view, view[HEADER.size : end] as body:
                text = str(body, "utf-8")
        except MemoryError:
            pass
        if end == len(data):
            self._data = bytearray()
        else:
            del data[:end]
        # The frame's bytes are gone before its text is scanned: the peak is bytes + text, then
        # text + value, never all three.
        del data
        if text is None:
            return Unreadable(head, end - HEADER.size)
        try:
            return decode_text(text)
        except MemoryError:
            return Unreadable(head, end - HEADER.size)

    def _give_up(self, chunk: bytes) -> list[dict[str, Any] | Unreadable]:
        """The frame being read cannot be held: remember what it was and discard the rest of it."""
        head = bytes(self._data[: HEADER.size + _HEAD]) + chunk[: HEADER.size + _HEAD]
        received = len(self._data) + len(chunk)
        self._data = bytearray()
        (length,) = HEADER.unpack_from(head)
        unreadable = Unreadable(head[HEADER.size :], length)
        end = HEADER.size + length
        if received >= end:
            return [unreadable, *self.feed(chunk[end - (received - len(chunk)) :])]
        self._skip = end - received
        self._skipped = unreadable
        return []


def _decoded(chunk: bytes, start: int, end: int) -> dict[str, Any] | Unreadable:
    try:
        return decode(chunk[start:end])
    except MemoryError:
        return Unreadable(chunk[start : start + _HEAD], end - start)
