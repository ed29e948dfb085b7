"""The child's end of the control channel while the program runs.

Calls go out as ``call`` frames and discovery requests as ``discover``
frames, with ids 1, 2, 3, ... shared in submission order; ``reply`` frames
settle them. At most ``max_pending`` requests are outstanding:
further calls wait for a reply here, so a well-behaved program never trips
the host's pending-call check. A slot is released when the *reply* arrives,
not when the awaiting task gives up, because the host counts the same way.
A reply the child cannot hold or decode (its memory cap) fails that one
request with code ``reply-undecodable`` (ADR 0051).

In kernel mode one channel serves many cells: :meth:`ChildChannel.open_cell`
starts each with the host's next id and the cell's tools, :meth:`ChildChannel.close_cell`
ends it (requests still waiting fail, new ones are refused without a frame until the
next cell), and the host's next ``boot`` frame arrives through :meth:`ChildChannel.next_boot`.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Callable
from typing import Any

from . import frames, lossless, messages, reaper
from .capabilities import DiscoveryError
from .namespace import ToolCallError
from .repl import ReplError

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
        self._max_pending = max_pending
        self._slots = asyncio.Semaphore(max_pending)
        self._buffer = frames.FrameBuffer()
        self._write_lock = threading.Lock()
        self._loop = asyncio.get_running_loop()
        self._kernel = False
        self._running = True
        """Whether a cell (or the one-shot program) is running: requests are refused between cells."""
        self._cell = 0
        """Counts cells: a request that waited for a slot across a cell's end is refused."""
        self._names: frozenset[str] | None = None
        """Kernel mode: the current cell's tools (held proxies of other tools are refused)."""
        self._turned_off: dict[str, int] = {}
        """Kernel mode: tools a capability refresh turned off -> the refresh's number (its refusal names it)."""
        self._boot: asyncio.Future[dict[str, Any]] | None = None
        os.set_blocking(fd_in, False)
        self._loop.add_reader(fd_in, self._readable)

    # -- kernel mode ----------------------------------------------------------------

    def open_cell(self, first_id: int, names: frozenset[str], turned_off: dict[str, int] | None = None) -> None:
        """Start a kernel-mode cell: its requests are numbered from ``first_id`` and may reach ``names``;
        a held proxy of a tool in ``turned_off`` is refused naming the refresh that turned it off."""
        self._kernel = True
        self._running = True
        self._cell += 1
        self._next_id = first_id - 1
        self._names = names
        self._turned_off = dict(turned_off or {})

    def close_cell(self) -> None:
        """End the cell: requests still waiting for a reply or a slot fail; new ones are refused."""
        self._running = False
        self._cell += 1
        pending, self._pending = self._pending, {}
        for request_id, future in pending.items():
            if not future.done():
                future.set_result(_no_cell_reply(request_id))
        old, self._slots = self._slots, asyncio.Semaphore(self._max_pending)
        old.release()  # a request waiting on the old slots wakes, sees the cell is over and wakes the next

    async def next_boot(self) -> dict[str, Any]:
        """The host's next ``boot`` frame (the process ends quietly when the host closes the channel)."""
        self._boot = self._loop.create_future()
        try:
            return await self._boot
        finally:
            self._boot = None

    def _refuse(self, name: str, tool: bool = False) -> None:
        """Raise the kernel's local refusals: no cell is running, or (``tool``) ``name`` is not a tool of
        this cell."""
        if not self._running:
            raise ToolCallError(name, NO_CELL, messages.text("runtime.worker.no_cell"))
        if tool and self._names is not None and name not in self._names:
            sequence = self._turned_off.get(name)
            if sequence is not None:
                text = messages.text("runtime.worker.tool_turned_off", name=name, sequence=sequence)
            else:
                text = messages.text("runtime.worker.tool_unavailable", name=name)
            raise ToolCallError(name, UNAVAILABLE, text)

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
            if self._kernel and not self._running:
                # Between cells the host closing the channel is how a kernel is stopped.
                reaper.kill_children()
                os._exit(0)
            # The host is gone: nobody can receive a result any more.
            os._exit(70)
        for item in self._buffer.feed(chunk):
            if type(item) is dict and item.get("type") == "boot":
                self._booted(item)
                continue
            frame = item if type(item) is dict else _undecodable(item)
            future = self._pending.pop(frame["id"], None)
            if future is None:
                continue  # a late reply to a request of a cell that has ended: its slot is gone
            self._slots.release()
            if not future.done():
                future.set_result(frame)

    def _booted(self, frame: dict[str, Any]) -> None:
        if self._boot is None or self._boot.done():
            os.write(2, b"ptc-plus: a boot frame while a cell is running\n")
            os._exit(70)
        self._boot.set_result(frame)

    async def _request(self, message: dict[str, Any]) -> dict[str, Any]:
        """Send ``message`` with the next id once a slot is free; the reply frame."""
        await self._acquire(str(message.get("method") or message.get("op")))
        self._next_id += 1
        message["id"] = self._next_id
        future: asyncio.Future[dict[str, Any]] = self._loop.create_future()
        self._pending[self._next_id] = future
        self._before_call()
        self.send(message)
        return await future

    async def _acquire(self, name: str) -> None:
        """Take a slot for a request; refused if the cell ended while it waited."""
        cell, slots = self._cell, self._slots
        await slots.acquire()
        if cell != self._cell:
            slots.release()  # pass the wake-up on to the next request waiting on these old slots
            raise ToolCallError(name, NO_CELL, messages.text("runtime.worker.no_cell"))

    async def repl(self, op: str, name: str | None, volatile: dict[str, str] | None) -> Any:
        """A ``repl`` request (kernel mode only): the host's value, or :class:`ReplError`."""
        self._refuse(f"repl.{op}")
        reply = await self._request({"type": "repl", "op": op, "name": name, "volatile": volatile})
        if reply["ok"]:
            return reply["value"]
        failure = reply["error"]
        if failure.get("code") == NO_CELL:
            raise ToolCallError(f"repl.{op}", NO_CELL, str(failure.get("message", "")))
        raise ReplError(str(failure.get("code", "error")), str(failure.get("message", "")))

    async def discover(self, method: str, args: dict[str, Any]) -> Any:
        self._refuse(f"capabilities.{method}")
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
        if failure.get("code") == NO_CELL:
            raise ToolCallError(f"capabilities.{method}", NO_CELL, str(failure.get("message", "")))
        raise DiscoveryError(method, str(failure.get("code", "error")), str(failure.get("message", "")))

    async def invoke(self, name: str, args: dict[str, Any]) -> Any:
        if self._kernel:
            self._refuse(name, tool=True)
        try:
            lossless.check(args, "arguments")
        except lossless.NotLossless as error:
            raise ToolArgumentError(messages.text("runtime.worker.bad_argument", name=name, detail=error)) from None
        # _request inlined: this is the per-call hot path.
        await self._acquire(name)
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


NO_CELL = "no-cell"
"""Kernel mode: a request made while no cell is running (by a task a finished cell left behind)."""
UNAVAILABLE = "tool-unavailable"
"""Kernel mode: a call through a tool proxy held from an earlier cell whose tool this cell does not have."""


def _no_cell_reply(request_id: int) -> dict[str, Any]:
    return {
        "id": request_id,
        "ok": False,
        "error": {"code": NO_CELL, "message": messages.text("runtime.worker.no_cell")},
    }


def _undecodable(item: frames.Unreadable | dict[str, Any]) -> dict[str, Any]:
    """The reply a request gets when its real one could not be decoded."""
    assert isinstance(item, frames.Unreadable)
    if item.id is None:
        # Not a reply the host would send: nothing can be matched to it any more.
        os.write(2, b"ptc-plus: an unreadable frame from the host\n")
        os._exit(70)
    text = messages.text("runtime.worker.reply_undecodable", size=item.size)
    return {"id": item.id, "ok": False, "error": {"code": "reply-undecodable", "message": text}}
