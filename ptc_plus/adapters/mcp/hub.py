"""The hub: one background thread and event loop owning every MCP client session of the process.

The SDK is anyio-based and a ``ClientSession`` must be entered and left in
one task, while the host's hooks are synchronous and its tool bodies run on
its own loop. So every connection lives on the hub's loop (one task per
server, :meth:`Server._run`) and callers hand it coroutines
(:meth:`Hub.call`, :meth:`Hub.wait`). Servers are keyed by their definition
(:class:`ServerKey`), shared by every session and host of the process, started
at first need and stopped when their last holder releases them (ADR 0072).

A server whose process ends, or that does not answer a request within its
``timeout_s``, is dropped: the call that needed it fails with a PTC-70xx
error at once (the process is stopped in the background) and the next call
starts it again, after a back-off that grows with consecutive failures —
failed starts, crashes (mid-call or idle) and hung calls all count, at most
once per connection, and a successful call resets the count; after
:data:`MAX_FAILURES` in a row it rests (PTC-7004) until :data:`GIVE_UP_S`
pass. A start (handshake and first listing) is bounded by ``start_timeout_s``,
each request by ``timeout_s`` alone (ADR 0093).

A server is started by its first request (a program's call, a resource read)
or by :meth:`Server.session` from a refresh or a check; a plan needs only its
tools, which :attr:`Server.known` gives from the last successful listing of
its definition when it has not started in this process (ADR 0097). Every
successful listing is written to that snapshot.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
import time
from collections.abc import Awaitable, Callable, Coroutine
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

import anyio
import attrs
import mcp.types as mt
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError
from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT

from ptc_plus.adapters.mcp.errors import (
    HandshakeTimedOut,
    RequestFailed,
    RequestTimedOut,
    ServerCrashed,
    ServerExited,
    ServerGaveUp,
    ServerUnavailable,
)
from ptc_plus.adapters.mcp.launcher import launch_argv
from ptc_plus.adapters.mcp.snapshots import ToolsSnapshot, default_store, definition_digest
from ptc_plus.adapters.mcp.startup import StderrTail, check_command, exit_code, record_spawns
from ptc_plus.errors import PtcError

T = TypeVar("T")

MAX_FAILURES = 5
"""Consecutive failures (crash, hung call, failed start) after which the server rests for :data:`GIVE_UP_S`."""
GIVE_UP_S = 60.0
BACKOFF_S = (0.0, 0.5, 1.0, 2.0, 4.0)
"""Wait before the n-th consecutive restart: the first is at once (a crash rarely repeats at once)."""


def within(seconds: float) -> asyncio.Timeout:
    """The one timer a start or a request runs under (a seam: tests count the bounds a call is given)."""
    return asyncio.timeout(seconds)


@attrs.frozen(kw_only=True)
class ServerKey:
    """A server's definition: two sessions share a running server exactly when these are equal."""

    name: str
    command: str
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    cwd: str | None = None
    timeout_s: float = 30.0
    start_timeout_s: float = 60.0

    def digest(self) -> str:
        """What the definition's ``tools/list`` snapshot is filed under (name and timeouts list nothing)."""
        return definition_digest(self.command, self.args, self.env, self.cwd)


@attrs.frozen(kw_only=True)
class Listing:
    """What a started server declared: its tools (as it lists them now), instructions and resource support."""

    tools: tuple[mt.Tool, ...] = ()
    instructions: str = ""
    resources: bool = False
    generation: int = 0
    """Bumped at every (re)start and ``tools/list_changed``: a caller can tell its copy is stale."""

    @classmethod
    def of_snapshot(cls, snapshot: ToolsSnapshot) -> Listing:
        """The listing a snapshot kept (generation 0: any live listing of this process is newer)."""
        return cls(tools=snapshot.mcp_tools(), instructions=snapshot.instructions, resources=snapshot.resources)


class Server:
    """One MCP server: at most one live connection, restarted on demand. Used on the hub's loop only."""

    def __init__(self, key: ServerKey) -> None:
        self.key = key
        self.listing: Listing | None = None
        """What the live (or last live) connection of this process listed; ``None``: never started here."""
        self._snapshot: ToolsSnapshot | None = None
        self._snapshot_listing: Listing | None = None
        self._session: ClientSession | None = None
        self._starting: asyncio.Future[ClientSession] | None = None
        self._stop: asyncio.Event | None = None
        self._task: asyncio.Task[None] | None = None
        self._ending: set[asyncio.Task[None]] = set()
        """Connections retired by a failed call, still stopping their process (awaited by :meth:`drop`)."""
        self._failures = 0
        self._failed_at = 0.0
        self._last_failure: PtcError | None = None
        self._connections = 0
        """Connections spawned so far: the id of the newest; a failure is charged once per connection."""
        self._charged = 0
        self._generation = 0
        self._stderr: StderrTail | None = None

    # -- connection -----------------------------------------------------------------------------
    async def session(self) -> ClientSession:
        """The live connection, starting the server (after its back-off) when there is none."""
        if self._session is not None:
            return self._session
        if self._starting is None:
            self._starting = asyncio.get_running_loop().create_future()
            starting = self._starting
            try:
                await self._backoff()
                self._stop = asyncio.Event()
                self._connections += 1
                self._task = asyncio.get_running_loop().create_task(self._run(starting, self._stop, self._connections))
                async with within(self.key.start_timeout_s):
                    await asyncio.shield(starting)
            except BaseException as error:
                if self._task is not None:
                    self._task.cancel()  # a handshake that never came: the task's exit stops the process
                if not starting.done():
                    starting.set_exception(error)
                starting.exception()  # retrieved: waiters get it below
                self._starting = None
                if isinstance(error, ServerGaveUp):
                    raise  # a refusal to try is no new failure
                failed: ServerUnavailable
                if isinstance(error, asyncio.TimeoutError):
                    stderr = self._stderr.text() if self._stderr is not None else ""
                    failed = HandshakeTimedOut(server=self.key.name, seconds=self.key.start_timeout_s, stderr=stderr)
                elif isinstance(error, ServerUnavailable):
                    failed = error
                else:
                    failed = ServerUnavailable(server=self.key.name, detail=f"{type(error).__name__}: {error}")
                self._fail(failed, self._connections)
                raise failed from None
            self._starting = None
            return starting.result()
        try:
            return await asyncio.shield(self._starting)
        except ServerUnavailable:
            raise
        except BaseException as error:
            raise ServerUnavailable(server=self.key.name, detail=f"{type(error).__name__}: {error}") from None

    @property
    def snapshot(self) -> ToolsSnapshot | None:
        """The definition's saved listing as last read or written here (what :attr:`known` falls back to)."""
        return self._snapshot

    @snapshot.setter
    def snapshot(self, snapshot: ToolsSnapshot | None) -> None:
        self._snapshot = snapshot
        self._snapshot_listing = Listing.of_snapshot(snapshot) if snapshot is not None else None

    @property
    def known(self) -> Listing | None:
        """The server's tools as best known without starting it: the live listing, else the snapshot's."""
        return self.listing if self.listing is not None else self._snapshot_listing

    @property
    def failures(self) -> int:
        """Consecutive failures now (0 after a successful call)."""
        return self._failures

    async def _backoff(self) -> None:
        if self._failures >= MAX_FAILURES:
            rest = self._failed_at + GIVE_UP_S - time.monotonic()
            if rest > 0:
                assert self._last_failure is not None  # counted failures always record theirs
                raise ServerGaveUp(
                    server=self.key.name,
                    failures=self._failures,
                    seconds=max(1, round(rest)),
                    retry_at=(datetime.now(UTC) + timedelta(seconds=rest)).strftime("%Y-%m-%dT%H:%M:%SZ"),
                    last=self._last_failure,
                )
            self._failures = MAX_FAILURES - 1  # the rest is over: one try, and a failure rests again
        if self._failures:
            wait = BACKOFF_S[min(self._failures - 1, len(BACKOFF_S) - 1)]
            await asyncio.sleep(max(0.0, self._failed_at + wait - time.monotonic()))

    def _fail(self, failure: PtcError, connection: int) -> None:
        """Count one failure of ``connection`` (a later report of the same connection's end is not another)."""
        if connection <= self._charged:
            return
        self._charged = connection
        self._failures += 1
        self._failed_at = time.monotonic()
        self._last_failure = failure

    async def _run(self, ready: asyncio.Future[ClientSession], stop: asyncio.Event, connection: int) -> None:
        """Own the connection from spawn to exit in this one task (the SDK's rule)."""
        program, arguments = launch_argv(self.key.command, self.key.args)
        params = StdioServerParameters(
            command=program, args=arguments, env=dict(self.key.env) or None, cwd=self.key.cwd
        )
        ended = asyncio.Event()
        mine: ClientSession | None = None
        spawned = record_spawns()
        tail = self._stderr = StderrTail()
        try:
            check_command(self.key.name, self.key.command, dict(self.key.env), self.key.cwd)
            with tail.writer as errlog:
                async with stdio_client(params, errlog=errlog) as (read, write):
                    watched, relay = _watch_eof(read, ended)
                    async with anyio.create_task_group() as group:
                        group.start_soon(relay)
                        async with ClientSession(watched, write, message_handler=self._notified) as session:
                            init = await session.initialize()
                            tools = await _all_tools(session)
                            self._generation += 1
                            self.listing = Listing(
                                tools=tools,
                                instructions=init.instructions or "",
                                resources=init.capabilities.resources is not None,
                                generation=self._generation,
                            )
                            await self._save(self.listing)
                            self._session = mine = session
                            if not ready.done():
                                ready.set_result(session)
                            await _first(stop.wait(), ended.wait())
                        group.cancel_scope.cancel()
        except BaseException as error:
            if not ready.done():
                ready.set_exception(await self._start_failure(error, spawned, tail))
            if not isinstance(error, Exception):
                raise
        finally:
            tail.close_writer()
            if mine is not None and not stop.is_set():  # a live connection ended by itself: a crash
                self._fail(ServerUnavailable(server=self.key.name, detail="its process ended"), connection)
            if self._session is mine:  # a retired connection ending late leaves a newer one alone
                self._session = None

    async def _start_failure(self, error: BaseException, spawned: list[Any], tail: StderrTail) -> BaseException:
        """``error`` of a start, described: a process that ended says its exit code and last stderr lines."""
        if isinstance(error, ServerUnavailable) or not isinstance(error, Exception):
            return error
        code = exit_code(spawned)
        if code is None:
            return error
        tail.close_writer()
        await asyncio.to_thread(tail.drain)
        return ServerExited(server=self.key.name, exit_code=code, stderr=tail.text())

    async def _notified(self, message: Any) -> None:
        if isinstance(message, mt.ToolListChangedNotification) and self._session is not None:
            # Re-listed at once: the hub's copy follows the server; the frozen plan keeps new tools out
            # until a refresh (ADR 0056).
            with contextlib.suppress(Exception):
                tools = await _all_tools(self._session)
                self._generation += 1
                base = self.listing or Listing()
                self.listing = attrs.evolve(base, tools=tools, generation=self._generation)
                await self._save(self.listing)

    async def _save(self, listing: Listing) -> None:
        """File ``listing`` as the definition's snapshot; a store that cannot be written only costs a later start."""
        key = self.key
        with contextlib.suppress(Exception):
            self.snapshot = await asyncio.to_thread(
                default_store().save,
                key.digest(),
                key.name,
                listing.tools,
                instructions=listing.instructions,
                resources=listing.resources,
            )

    async def drop(self) -> None:
        """End the connection (stops the process) and wait for it, and for connections still retiring."""
        task = self._task
        self._retire()
        for ending in [*self._ending, *([task] if task is not None else [])]:
            with contextlib.suppress(BaseException):
                await ending

    def _retire(self) -> None:
        """Stop the live connection without waiting: the call that found it dead or hung returns at once."""
        if self._stop is not None:
            self._stop.set()
        task = self._task
        if task is not None and not task.done():
            self._ending.add(task)
            task.add_done_callback(self._ending.discard)
        self._session = None
        self._stop = None
        self._task = None

    # -- requests -------------------------------------------------------------------------------
    async def request(self, what: str, send: Callable[[ClientSession], Awaitable[T]]) -> T:
        """Send one request (``what``: the tool or operation, for errors) on the live connection.

        The request gets ``timeout_s`` and nothing more: a server that let it pass
        counts as hung, its connection is retired (the process is stopped in the
        background, not on the caller's time) and the next call starts it again.

        :raises ServerCrashed: the process ended while the request was open.
        :raises RequestTimedOut: no answer in ``timeout_s``.
        """
        session = await self.session()
        connection = self._connections
        failure: PtcError
        try:
            async with within(self.key.timeout_s):
                result = await send(session)
        except TimeoutError:
            failure = RequestTimedOut(server=self.key.name, tool=what, seconds=self.key.timeout_s)
        except MCPError as error:
            if error.code == CONNECTION_CLOSED:
                failure = ServerCrashed(server=self.key.name, tool=what)
            elif error.code == REQUEST_TIMEOUT:
                failure = RequestTimedOut(server=self.key.name, tool=what, seconds=self.key.timeout_s)
            else:
                raise RequestFailed(server=self.key.name, tool=what, detail=error.message) from None
        else:
            self._failures = 0
            return result
        self._fail(failure, connection)
        if self._connections == connection:  # not already replaced by a newer connection
            self._retire()
        raise failure from None


async def _first(*waits: Coroutine[Any, Any, Any]) -> None:
    tasks = [asyncio.ensure_future(w) for w in waits]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()


def _watch_eof(read: Any, ended: asyncio.Event) -> tuple[Any, Callable[[], Coroutine[Any, Any, None]]]:
    """A relay of ``read`` that sets ``ended`` at end of stream: a server that dies while idle is seen at once."""
    send, receive = anyio.create_memory_object_stream[Any](0)

    async def relay() -> None:
        try:
            async with send:
                async for item in read:
                    await send.send(item)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass
        finally:
            ended.set()

    return receive, relay


async def _all_tools(session: ClientSession) -> tuple[mt.Tool, ...]:
    tools: list[mt.Tool] = []
    cursor: str | None = None
    while True:
        page = await session.list_tools(params=mt.PaginatedRequestParams(cursor=cursor) if cursor else None)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            return tuple(tools)


class Hub:
    """The process's MCP hub: a daemon thread with its own loop, started at first use."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._servers: dict[ServerKey, Server] = {}
        self._holders: dict[ServerKey, set[object]] = {}

    def _running_loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None or self._thread is None or not self._thread.is_alive():
                loop = asyncio.new_event_loop()
                started = threading.Event()

                def main() -> None:
                    asyncio.set_event_loop(loop)
                    loop.call_soon(started.set)
                    loop.run_forever()

                self._thread = threading.Thread(target=main, name="ptc-plus-mcp-hub", daemon=True)
                self._thread.start()
                started.wait()
                self._loop = loop
            return self._loop

    def submit(self, work: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        return asyncio.run_coroutine_threadsafe(work, self._running_loop())

    def wait(self, work: Coroutine[Any, Any, T]) -> T:
        """Run ``work`` on the hub from synchronous code (a hook) and return its result."""
        return self.submit(work).result()

    async def call(self, work: Coroutine[Any, Any, T]) -> T:
        """Run ``work`` on the hub from another event loop (a tool body); cancelling cancels it there."""
        future = self.submit(work)
        try:
            return await asyncio.wrap_future(future)
        except asyncio.CancelledError:
            future.cancel()
            raise

    # -- servers ----------------------------------------------------------------------------------
    def hold(self, holder: object, key: ServerKey) -> Server:
        """``holder`` (a controller) uses ``key``'s server until :meth:`release`; it is not started here."""
        with self._lock:
            server = self._servers.get(key)
            if server is None:
                server = self._servers[key] = Server(key)
            self._holders.setdefault(key, set()).add(holder)
            return server

    def release(self, holder: object) -> None:
        """``holder`` is done: servers nobody else holds are stopped (their processes end) before this returns."""
        with self._lock:
            unused = []
            for key, holders in list(self._holders.items()):
                holders.discard(holder)
                if not holders:
                    del self._holders[key]
                    unused.append(self._servers.pop(key))
            loop = self._loop
        if unused and loop is not None:
            asyncio.run_coroutine_threadsafe(_drop_all(unused), loop).result()

    async def arelease(self, holder: object) -> None:
        """:meth:`release` from a coroutine on another loop (the host's shutdown) without blocking it."""
        await asyncio.get_running_loop().run_in_executor(None, self.release, holder)

    def held(self) -> frozenset[ServerKey]:
        """The definitions of the servers some holder uses now."""
        with self._lock:
            return frozenset(self._servers)


async def _drop_all(servers: list[Server]) -> None:
    await asyncio.gather(*(s.drop() for s in servers))


HUB = Hub()
"""The one hub of the process (its thread starts at first use)."""
