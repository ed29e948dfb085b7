"""The ordered lane: the reference host's scheduler for a group of calls.

A lane admits calls strictly in submission (ticket) order. ``parallel``
bodies overlap up to ``max_parallel``; an ``exclusive`` call waits until
no body is running and holds the lane until its commit ran. Commits run
in ticket order whatever order bodies finish in. Closing a lane abandons
every call not yet admitted; admitted calls finish and commit normally.

Each waiting ticket has its own future, woken only when it is its turn, so
a lane with thousands of queued calls does constant work per admission
instead of waking every waiter (ADR 0003).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

import attrs

from hookspecs.types import Concurrency

T = TypeVar("T")
U = TypeVar("U")


class LaneClosed(Exception):
    """The lane was closed before this ticket was admitted: the call never ran."""


@attrs.define
class _Waiter:
    concurrency: Concurrency
    admitted: asyncio.Future[None]
    on_admit: Callable[[], None] | None


class OrderedLane:
    """Admission, concurrency and commit order for one group of calls."""

    def __init__(self, max_parallel: int) -> None:
        if max_parallel < 1:
            raise ValueError("max_parallel must be at least 1")
        self.max_parallel = max_parallel
        self._issued = 0
        self._next_admit = 0
        self._next_commit = 0
        self._running = 0
        self._exclusive_held = False
        self._closed = False
        self._skipped: set[int] = set()
        """Tickets that will never be admitted or never commit (cancelled, failed, abandoned)."""
        self._waiting: dict[int, _Waiter] = {}
        self._commit_turns: dict[int, asyncio.Future[None]] = {}
        self._admitted: set[int] = set()
        self._drained: asyncio.Future[None] | None = None
        self.preparing: asyncio.Future[None] | None = None
        """Done once the latest call that left the loop to be prepared is prepared (the dispatcher's;
        ``None``: no call did). A later call waits for it, so preparation keeps submission order."""

    @property
    def closed(self) -> bool:
        return self._closed

    def ticket(self) -> int:
        """Take the next place in submission order (synchronous, so order is the caller's order)."""
        if self._closed:
            raise LaneClosed
        ticket = self._issued
        self._issued += 1
        return ticket

    async def run(
        self,
        ticket: int,
        concurrency: Concurrency,
        body: Callable[[], Awaitable[T]],
        commit: Callable[[T], U],
        on_admit: Callable[[], None] | None = None,
    ) -> U:
        """Run ``body`` in this ticket's turn and ``commit`` its value in ticket order; return what commit returns.

        ``on_admit`` runs synchronously at admission, so admissions are
        observed in ticket order; if it raises, the call is not admitted,
        ``body`` never runs and that exception propagates from here (later
        tickets go on). Raises :class:`LaneClosed` if the lane
        closed before admission. If ``body`` raises (or is cancelled)
        nothing is committed for the ticket and the exception propagates;
        the lane keeps going.
        """
        exclusive = concurrency is Concurrency.EXCLUSIVE
        await self._admission(ticket, concurrency, on_admit)
        try:
            value = await body()
        except BaseException:
            self._release(exclusive)
            self._finish(ticket)
            raise
        if not exclusive:
            self._release(exclusive=False)  # a finished parallel body frees its slot now
        try:
            await self._commit_turn(ticket)
        except BaseException:
            if exclusive:
                self._release(exclusive=True)
            self._finish(ticket)
            raise
        try:
            return commit(value)
        finally:
            if exclusive:
                self._release(exclusive=True)
            self._finish(ticket)

    def skip(self, ticket: int) -> None:
        """``ticket`` will never run (its call was given up before :meth:`run`): later tickets go on."""
        self._skipped.add(ticket)
        self._pump()
        self._advance_commits()

    async def close(self) -> None:
        """Abandon every ticket not yet admitted and wait until admitted ones committed."""
        self._closed = True
        self._pump()
        if self._admitted:
            self._drained = asyncio.get_running_loop().create_future()
            await self._drained

    # -- admission ----------------------------------------------------------------------
    async def _admission(self, ticket: int, concurrency: Concurrency, on_admit: Callable[[], None] | None) -> None:
        admitted: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting[ticket] = _Waiter(concurrency=concurrency, admitted=admitted, on_admit=on_admit)
        self._pump()
        try:
            await admitted
        except LaneClosed:
            raise
        except BaseException:
            if admitted.done() and not admitted.cancelled() and admitted.exception() is None:
                # Admitted in the same instant we were cancelled: give the slot back.
                self._release(concurrency is Concurrency.EXCLUSIVE)
                self._finish(ticket)
            else:
                self._waiting.pop(ticket, None)
                self._skipped.add(ticket)
                self._pump()
                self._advance_commits()
            raise

    def _pump(self) -> None:
        """Admit from the head of the queue while the head may start; abandon everything once closed."""
        while True:
            while self._next_admit in self._skipped:
                self._next_admit += 1
            waiter = self._waiting.get(self._next_admit)
            if waiter is None:
                return
            ticket = self._next_admit
            if waiter.admitted.done():  # cancelled while queued; its run() cleans up
                return
            if self._closed:
                del self._waiting[ticket]
                self._skipped.add(ticket)
                waiter.admitted.set_exception(LaneClosed())
                continue
            if not self._may_start(ticket, waiter.concurrency):
                return
            del self._waiting[ticket]
            self._next_admit += 1
            self._running += 1
            self._exclusive_held = waiter.concurrency is Concurrency.EXCLUSIVE
            self._admitted.add(ticket)
            if waiter.on_admit is not None:
                try:
                    waiter.on_admit()
                except Exception as failed:
                    self._admission_failed(ticket, waiter, failed)
                    continue
            waiter.admitted.set_result(None)

    def _admission_failed(self, ticket: int, waiter: _Waiter, failed: Exception) -> None:
        """``on_admit`` raised (the dispatcher could not log the start): the call never runs. Its slot is given
        back and it is skipped in both orders, and the failure goes to its own :meth:`run`, never to the task
        that happened to pump (another call's): otherwise the lane waited for its commit for ever."""
        self._running -= 1
        self._exclusive_held = False  # it could start, so no other call held the lane
        self._admitted.discard(ticket)
        self._skipped.add(ticket)
        waiter.admitted.set_exception(failed)
        self._advance_commits()
        if not self._admitted and self._drained is not None and not self._drained.done():
            self._drained.set_result(None)

    def _may_start(self, ticket: int, concurrency: Concurrency) -> bool:
        if self._exclusive_held:
            return False
        if concurrency is Concurrency.EXCLUSIVE:
            # Drained means every earlier call has settled (committed), not only finished its body.
            return self._running == 0 and self._next_commit == ticket
        return self._running < self.max_parallel

    def _release(self, exclusive: bool) -> None:
        self._running -= 1
        if exclusive:
            self._exclusive_held = False
        self._pump()

    # -- commit order -------------------------------------------------------------------
    async def _commit_turn(self, ticket: int) -> None:
        if self._next_commit == ticket:
            return
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._commit_turns[ticket] = turn
        try:
            await turn
        finally:
            self._commit_turns.pop(ticket, None)

    def _finish(self, ticket: int) -> None:
        """The ticket is done (committed or given up): later tickets may commit."""
        self._admitted.discard(ticket)
        self._skipped.add(ticket)
        self._advance_commits()
        self._pump()
        if not self._admitted and self._drained is not None and not self._drained.done():
            self._drained.set_result(None)

    def _advance_commits(self) -> None:
        while self._next_commit in self._skipped:
            self._next_commit += 1
        turn = self._commit_turns.get(self._next_commit)
        if turn is not None and not turn.done():
            turn.set_result(None)
