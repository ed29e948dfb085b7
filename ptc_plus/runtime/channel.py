"""The control channel, host side: a pipe pair (or one socket, ADR 0128), read with an asyncio protocol.

Incoming bytes are cut into frames as they arrive; an oversized length is
refused before its body is buffered. Frames and violations are handed to
whoever is attached (:meth:`ControlChannel.attach`); until then they wait,
so a warm spare's ``ready`` is not lost.

Outgoing frames are written by the channel itself (non-blocking writes
driven by the loop), each with an optional callback run once its last byte
has entered the pipe. The run releases a request's pending slot only then,
so a child that never reads its replies can hold at most
``max_pending_calls`` of them in the host (ADR 0041).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import os
import socket
import stat
from collections.abc import Callable
from typing import Any

from ptc_plus.runtime import protocol
from ptc_plus.runtime.protocol import ChildFrame, ProtocolViolation

READ_CHUNK = 1 << 16

FrameHandler = Callable[[ChildFrame], None]
ViolationHandler = Callable[[ProtocolViolation], None]
Flushed = Callable[[], None]


class _Reader(asyncio.Protocol):
    def __init__(self, channel: ControlChannel) -> None:
        self._channel = channel

    def data_received(self, data: bytes) -> None:
        self._channel._received(data)

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
        self._write_fd: int | None = None
        self._outgoing: collections.deque[tuple[memoryview, Flushed | None]] = collections.deque()
        self._loop = asyncio.get_running_loop()

    @classmethod
    async def open(cls, read_fd: int, write_fd: int, max_message_bytes: int) -> ControlChannel:
        """Take ownership of the host's pipe ends ``read_fd`` and ``write_fd`` (or two descriptors of one
        connected socket: any ordered, reliable byte stream each way will do, ADR 0128)."""
        loop = asyncio.get_running_loop()
        channel = cls(max_message_bytes)
        read_transport, _ = await loop.connect_read_pipe(lambda: _Reader(channel), os.fdopen(read_fd, "rb", 0))
        os.set_blocking(write_fd, False)
        # asyncio reads pipes 256 KiB at a time; a buffer that large is mmap'ed and unmapped on every read.
        read_transport.max_size = READ_CHUNK  # type: ignore[attr-defined]
        channel._read_transport = read_transport
        channel._write_fd = write_fd
        return channel

    def attach(self, on_frame: FrameHandler, on_violation: ViolationHandler) -> None:
        self._on_frame, self._on_violation = on_frame, on_violation
        waiting, self._waiting = self._waiting, []
        for item in waiting:
            self._deliver(item)

    def send(self, message: dict[str, Any]) -> None:
        """Queue a frame for the child; silently dropped once the channel is closed."""
        self.send_bytes(protocol.encode(message))

    def send_bytes(self, frame: bytes, on_flushed: Flushed | None = None) -> None:
        """Queue ``frame``; ``on_flushed()`` runs once all of it is in the pipe (never, if the channel closes)."""
        if self._write_fd is None:
            return
        idle = not self._outgoing
        self._outgoing.append((memoryview(frame), on_flushed))
        if idle:
            self._flush()
            if self._outgoing and self._write_fd is not None:
                self._loop.add_writer(self._write_fd, self._flush)

    def _flush(self) -> None:
        fd = self._write_fd
        outgoing = self._outgoing
        while outgoing and fd is not None:
            view, on_flushed = outgoing[0]
            try:
                written = os.write(fd, view)
            except BlockingIOError:
                return
            except OSError:  # the child is gone; its channel closes on the read side
                self.close_writer()
                return
            if written < len(view):
                outgoing[0] = (view[written:], on_flushed)
                continue
            outgoing.popleft()
            if on_flushed is not None:
                on_flushed()
            fd = self._write_fd
        if not outgoing and fd is not None:
            self._loop.remove_writer(fd)

    def close_writer(self) -> None:
        """Close the host's write end now (the child reads EOF); queued frames are dropped."""
        fd, self._write_fd = self._write_fd, None
        self._outgoing.clear()
        if fd is not None:
            self._loop.remove_writer(fd)
            _shut_down_writing(fd)
            with contextlib.suppress(OSError):
                os.close(fd)

    def close(self) -> None:
        if self._read_transport is not None:
            self._read_transport.close()
        self.close_writer()

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
                # Read in place (no copy of the body); parse releases its views before the buffer is resized.
                frames.append(protocol.parse(buffer, self._max, offset + size, end))
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


def _shut_down_writing(fd: int) -> None:
    """End the host-to-child direction of a socket channel (ADR 0128); nothing for a pipe.

    One socket carries both directions there, and the read side holds another
    descriptor of it: closing ``fd`` alone would never give the child EOF.
    """
    with contextlib.suppress(OSError):
        if not stat.S_ISSOCK(os.fstat(fd).st_mode):
            return
        sock = socket.socket(fileno=fd)
        try:
            sock.shutdown(socket.SHUT_WR)
        finally:
            sock.detach()  # the caller closes ``fd``
