"""The control channel, host side: a pipe pair, read with an asyncio protocol.

Incoming bytes are cut into frames as they arrive; an oversized length is
refused before its body is buffered. Frames and violations are handed to
whoever is attached (:meth:`ControlChannel.attach`); until then they wait,
so a warm spare's ``ready`` is not lost.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from typing import Any

from ptc_plus.runtime import protocol
from ptc_plus.runtime.protocol import ChildFrame, ProtocolViolation

READ_CHUNK = 1 << 16

FrameHandler = Callable[[ChildFrame], None]
ViolationHandler = Callable[[ProtocolViolation], None]


class _Reader(asyncio.Protocol):
    def __init__(self, channel: ControlChannel) -> None:
        self._channel = channel

    def data_received(self, data: bytes) -> None:
        self._channel._received(data)

    def eof_received(self) -> bool | None:
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        self._channel._lost()


class ControlChannel:
    def __init__(self, max_message_bytes: int) -> None:
        self._max = max_message_bytes
        self._buffer = bytearray()
        self._waiting: list[ChildFrame | ProtocolViolation] = []
        self._on_frame: FrameHandler | None = None
        self._on_violation: ViolationHandler | None = None
        self._broken = False
        self.closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._read_transport: asyncio.ReadTransport | None = None
        self._write_transport: asyncio.WriteTransport | None = None

    @classmethod
    async def open(cls, read_fd: int, write_fd: int, max_message_bytes: int) -> ControlChannel:
        """Take ownership of the host's pipe ends ``read_fd`` and ``write_fd``."""
        loop = asyncio.get_running_loop()
        channel = cls(max_message_bytes)
        read_transport, _ = await loop.connect_read_pipe(lambda: _Reader(channel), os.fdopen(read_fd, "rb", 0))
        write_transport, _ = await loop.connect_write_pipe(asyncio.Protocol, os.fdopen(write_fd, "wb", 0))
        # asyncio reads pipes 256 KiB at a time; a buffer that large is mmap'ed and unmapped on every read.
        read_transport.max_size = READ_CHUNK  # type: ignore[attr-defined]
        channel._read_transport = read_transport
        channel._write_transport = write_transport
        return channel

    def attach(self, on_frame: FrameHandler, on_violation: ViolationHandler) -> None:
        self._on_frame, self._on_violation = on_frame, on_violation
        waiting, self._waiting = self._waiting, []
        for item in waiting:
            self._deliver(item)

    def send(self, message: dict[str, Any]) -> None:
        """Queue a frame for the child; silently dropped once the channel is closed."""
        self.send_bytes(protocol.encode(message))

    def send_bytes(self, frame: bytes) -> None:
        transport = self._write_transport
        if transport is not None and not transport.is_closing():
            transport.write(frame)

    def close(self) -> None:
        for transport in (self._read_transport, self._write_transport):
            if transport is not None:
                transport.close()

    def _deliver(self, item: ChildFrame | ProtocolViolation) -> None:
        if isinstance(item, ProtocolViolation):
            if self._on_violation is None:
                self._waiting.append(item)
            else:
                self._on_violation(item)
        elif self._on_frame is None:
            self._waiting.append(item)
        else:
            self._on_frame(item)

    def _received(self, data: bytes) -> None:
        if self._broken:
            return
        buffer = self._buffer
        buffer += data
        size = protocol.HEADER.size
        offset = 0
        frames: list[ChildFrame] = []
        try:
            while len(buffer) - offset >= size:
                length = protocol.frame_length(buffer, offset, self._max)
                end = offset + size + length
                if len(buffer) < end:
                    break
                # orjson reads the slice in place; the view is released before the buffer is resized.
                frames.append(protocol.parse(memoryview(buffer)[offset + size : end]))
                offset = end
        except ProtocolViolation as violation:
            self._broken = True
            # Not clear(): the violation's traceback may still hold a view of the old buffer.
            self._buffer = bytearray()
            for frame in frames:
                self._deliver(frame)
            self._deliver(violation)
            return
        del buffer[:offset]
        for frame in frames:
            self._deliver(frame)

    def _lost(self) -> None:
        if not self.closed.done():
            self.closed.set_result(None)
