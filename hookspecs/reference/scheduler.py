"""The ordered lane: the reference host's scheduler for a group of calls.

A lane admits calls strictly in submission (ticket) order. ``parallel``
bodies overlap up to ``max_parallel``; an ``exclusive`` call waits until
no body is running and holds the lane until its commit ran. Commits run
in ticket order whatever order bodies finish in. Closing a lane abandons
every call not yet admitted; admitted calls finish and commit normally.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

from hookspecs.types import Concurrency

T = TypeVar("T")
U = TypeVar("U")


class LaneClosed(Exception):
    """The lane was closed before this ticket was admitted: the call never ran."""


class OrderedLane:
    """Admission, concurrency and commit order for one group of calls."""

    def __init__(self, max_parallel: int) -> None:
        if max_parallel < 1:
            raise ValueError("max_parallel must be at least 1")
        self.max_parallel = max_parallel
        self._cond = asyncio.Condition()
        self._issued = 0
        self._next_admit = 0
        self._next_commit = 0
        self._running = 0
        self._exclusive_held = False
        self._skipped: set[int] = set()
        self._closed = False
        self._admitted: set[int] = set()

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

    def _advance(self) -> None:
        while self._next_admit in self._skipped and self._next_admit < self._issued:
            self._next_admit += 1
        while self._next_commit in self._skipped and self._next_commit < self._issued:
            self._next_commit += 1

    def _admissible(self, ticket: int, concurrency: Concurrency) -> bool:
        if self._next_admit != ticket or self._exclusive_held:
            return False
        if concurrency is Concurrency.EXCLUSIVE:
            return self._running == 0
        return self._running < self.max_parallel

    async def run(
        self,
        ticket: int,
        concurrency: Concurrency,
        body: Callable[[], Awaitable[T]],
        commit: Callable[[T], U],
        on_admit: Callable[[], None] | None = None,
    ) -> U:
        """Run ``body`` in this ticket's turn and ``commit`` its value in ticket order; return what commit returns.

        Raises :class:`LaneClosed` if the lane closed before admission.
        If ``body`` raises (or is cancelled) nothing is committed for the
        ticket and the exception propagates; the lane keeps going.
        """
        exclusive = concurrency is Concurrency.EXCLUSIVE
        async with self._cond:
            try:
                await self._cond.wait_for(lambda: self._closed or self._admissible(ticket, concurrency))
            except BaseException:
                self._skip(ticket)
                raise
            if self._closed:
                self._skip(ticket)
                raise LaneClosed
            self._next_admit += 1
            self._admitted.add(ticket)
            self._running += 1
            self._exclusive_held = exclusive
            self._advance()
            if on_admit is not None:
                on_admit()
            self._cond.notify_all()
        try:
            value = await body()
        except BaseException:
            async with self._cond:
                self._running -= 1
                self._exclusive_held = False
                self._skip(ticket)
            raise
        async with self._cond:
            if not exclusive:
                # A finished parallel body frees its slot now; only exclusive calls hold until commit.
                self._running -= 1
                self._cond.notify_all()
            try:
                await self._cond.wait_for(lambda: self._next_commit == ticket)
            except BaseException:
                # Cancelled while waiting for its commit turn: skip the ticket so later ones still commit.
                if exclusive:
                    self._running -= 1
                    self._exclusive_held = False
                self._skip(ticket)
                raise
            try:
                committed = commit(value)
            finally:
                self._next_commit += 1
                self._admitted.discard(ticket)
                if exclusive:
                    self._running -= 1
                    self._exclusive_held = False
                self._advance()
                self._cond.notify_all()
        return committed

    def _skip(self, ticket: int) -> None:
        self._skipped.add(ticket)
        self._admitted.discard(ticket)
        self._advance()
        self._cond.notify_all()

    async def close(self) -> None:
        """Abandon every ticket not yet admitted and wait until admitted ones committed."""
        async with self._cond:
            self._closed = True
            self._cond.notify_all()
            await self._cond.wait_for(lambda: not self._admitted)
