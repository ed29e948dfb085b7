"""Frames on the control channel, child side: a 4-byte big-endian length, then a JSON object.

The host writes with orjson and the child with :mod:`json`; both obey
:mod:`.lossless`, so the bytes mean the same on both ends.
"""

from __future__ import annotations

import json
import os
import struct
from typing import Any

HEADER = struct.Struct(">I")
_ENCODER = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":"))
_DECODER = json.JSONDecoder()


def decode(body: bytes | bytearray) -> dict[str, Any]:
    """One frame body (UTF-8 JSON object) as a dict."""
    message: dict[str, Any] = _DECODER.decode(body.decode("utf-8"))
    return message


def encode(message: dict[str, Any]) -> bytes:
    """One frame holding ``message`` (already known to be lossless)."""
    body = _ENCODER.encode(message).encode("utf-8")
    return HEADER.pack(len(body)) + body


def write_all(fd: int, data: bytes) -> None:
    """Write every byte of ``data`` to the blocking descriptor ``fd``."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


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
    """Accumulates bytes read without blocking and yields whole frames."""

    def __init__(self) -> None:
        self._data = bytearray()

    def feed(self, chunk: bytes) -> list[dict[str, Any]]:
        self._data += chunk
        frames: list[dict[str, Any]] = []
        while len(self._data) >= HEADER.size:
            (length,) = HEADER.unpack_from(self._data)
            end = HEADER.size + length
            if len(self._data) < end:
                break
            frames.append(decode(self._data[HEADER.size : end]))
            del self._data[:end]
        return frames
