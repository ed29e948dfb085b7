"""Frames on the control channel, child side: a 4-byte big-endian length, then a JSON object.

The host writes with orjson and the child with :mod:`json`; both obey
:mod:`.lossless`, so the bytes mean the same on both ends.
"""

from __future__ import annotations

import json
import json.encoder
import os
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


def decode(body: bytes | bytearray) -> dict[str, Any]:
    """One frame body (UTF-8 JSON object) as a dict."""
    text = body.decode("utf-8")
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
        if not self._data and len(chunk) >= HEADER.size:
            # The usual case: nothing buffered and the chunk is exactly one frame.
            (length,) = HEADER.unpack_from(chunk)
            if len(chunk) == HEADER.size + length:
                return [decode(chunk[HEADER.size :])]
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
