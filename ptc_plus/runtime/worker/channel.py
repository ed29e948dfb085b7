"""The child's end of the control channel while the program runs.

Calls go out as ``call`` frames and discovery requests as ``discover``
frames, with ids 1, 2, 3, ... shared in submission order; ``reply`` frames
settle them. At most ``max_pending`` requests are outstanding:
further calls wait for a reply here, so a well-behaved program never trips
the host's pending-call check. A slot is released when the *reply* arrives,
not when the awaiting task gives up, because the host counts the same way.
A reply the child cannot hold or decode (its memory cap) fails that one
request with code ``reply-undecodable`` (ADR 0051).
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Callable
from typing import Any

from . import frames, lossless, messages
from .capabilities import DiscoveryError
from .namespace import ToolCallError

READ_CHUNK = 1 << 16
"""Below glibc's mmap threshold: a larger ``os.read`` buffer costs an mmap/munmap pair on every read."""


class ToolArgumentError(TypeError):
    """The arguments of a tool call are not lossless JSON."""


class ChildChannel:
    def __init__(self, fd_in: int, fd_out: int, max_pending: int, before_call: Callable[[], None]) -> None:
        self._fd_in = fd_in
        self._fd_out = fd_out
        self._before_call = before_call
        self._pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._next_id = 0
        self._slots = asyncio.Semaphore(max_pending)
        self._buffer = frames.FrameBuffer()
        self._write_lock = threading.Lock()
        self._loop = asyncio.get_running_loop()
        os.set_blocking(fd_in, False)
        self._loop.add_reader(fd_in, self._readable)

    def send(self, message: dict[str, Any]) -> None:
        self.send_bytes(frames.encode(message))

    def send_bytes(self, frame: bytes) -> None:
        with self._write_lock:
            frames.write_all(self._fd_out, frame)

    def _readable(self) -> None:
        try:
            chunk = os.read(self._fd_in, READ_CHUNK)
        except BlockingIOError:
            return
        if not chunk:
            # The host is gone: nobody can receive a result any more.
            os._exit(70)
        for item in self._buffer.feed(chunk):
            frame = item if type(item) is dict else _undecodable(item)
            future = self._pending.pop(frame["id"], None)
            self._slots.release()
            if future is not None and not future.done():
                future.set_result(frame)

    async def _request(self, message: dict[str, Any]) -> dict[str, Any]:
        """Send ``message`` with the next id once a slot is free; the reply frame."""
        await self._slots.acquire()
        self._next_id += 1
        message["id"] = self._next_id
        future: asyncio.Future[dict[str, Any]] = self._loop.create_future()
        self._pending[self._next_id] = future
        self._before_call()
        self.send(message)
        return await future

    async def discover(self, method: str, args: dict[str, Any]) -> Any:
        try:
            lossless.check(args, "arguments")
        except lossless.NotLossless as error:
            raise ToolArgumentError(
                messages.text("runtime.worker.bad_discovery_argument", name=method, detail=error)
            ) from None
        reply = await self._request({"type": "discover", "method": method, "args": args})
        if reply["ok"]:
            return reply["value"]
        failure = reply["error"]
        raise DiscoveryError(method, str(failure.get("code", "error")), str(failure.get("message", "")))

    async def invoke(self, name: str, args: dict[str, Any]) -> Any:
        try:
            lossless.check(args, "arguments")
        except lossless.NotLossless as error:
            raise ToolArgumentError(messages.text("runtime.worker.bad_argument", name=name, detail=error)) from None
        # _request inlined: this is the per-call hot path.
        await self._slots.acquire()
        self._next_id += 1
        call_id = self._next_id
        future: asyncio.Future[dict[str, Any]] = self._loop.create_future()
        self._pending[call_id] = future
        self._before_call()
        self.send_bytes(frames.encode({"type": "call", "id": call_id, "tool": name, "args": args}))
        reply = await future
        if reply["ok"]:
            return reply["value"]
        failure = reply["error"]
        raise ToolCallError(
            failure.get("tool_name", name),
            failure.get("code", "error"),
            failure.get("message", ""),
            failure.get("call_id", ""),
            failure.get("data"),
        )


def _undecodable(item: frames.Unreadable | dict[str, Any]) -> dict[str, Any]:
    """The reply a request gets when its real one could not be decoded."""
    assert isinstance(item, frames.Unreadable)
    if item.id is None:
        # Not a reply the host would send: nothing can be matched to it any more.
        os.write(2, b"ptc-plus: an unreadable frame from the host\n")
        os._exit(70)
    text = messages.text("runtime.worker.reply_undecodable", size=item.size)
    return {"id": item.id, "ok": False, "error": {"code": "reply-undecodable", "message": text}}
