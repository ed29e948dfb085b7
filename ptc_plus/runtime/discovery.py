"""Discovery inside programs, host side: ``capabilities.*`` requests answered from one snapshot (ADR 0017).

A run is given its discovery source once, when it starts: a
:class:`~ptc_plus.capabilities.CatalogSnapshot`, or the
:class:`~ptc_plus.errors.PtcError` every request of the run fails with
(:class:`DiscoveryUnavailable` when the session has no discovery).
Requests are served by :func:`ptc_plus.capabilities.discovery.call` on the
event loop, one per loop turn in arrival order, so a burst of searches
cannot starve the run's timer or other runs. They are never tool calls: no
dispatch, no guard, no lane, no session log entry, no use.
"""

from __future__ import annotations

import asyncio
import collections
from collections.abc import Callable

from hookspecs import AgentRef, JSONValue
from ptc_plus.capabilities import discovery
from ptc_plus.capabilities.snapshot import CatalogSnapshot
from ptc_plus.errors import PtcError
from ptc_plus.runtime.errors import DiscoveryFailed, DiscoveryUnavailable

DiscoveryProvider = Callable[[AgentRef], CatalogSnapshot | None]
"""What ``run_code_definition(discovery=...)`` takes: the caller's snapshot, or ``None`` (no discovery)."""

DiscoverySource = CatalogSnapshot | PtcError
"""A run's discovery: the snapshot it answers from, or the error every request gets."""

Answer = tuple[bool, JSONValue]
"""``(True, response)`` or ``(False, {"code", "message"})``."""


def source_for(provider: DiscoveryProvider | None, agent: AgentRef) -> DiscoverySource:
    """Ask ``provider`` once for ``agent``'s snapshot; a missing provider or ``None`` means unavailable.

    A provider that raises does not fail the run: its programs get :class:`DiscoveryFailed`.
    """
    if provider is None:
        return DiscoveryUnavailable()
    try:
        snapshot = provider(agent)
    except PtcError as error:
        return error
    except Exception as error:  # the provider's bug must not take run_code down with it
        return DiscoveryFailed(detail=f"{type(error).__name__}: {error}")
    return DiscoveryUnavailable() if snapshot is None else snapshot


def answer(source: DiscoverySource, method: str, args: dict[str, JSONValue]) -> Answer:
    """Serve one request; a refused argument is an answer (the program catches it), never a raise."""
    if isinstance(source, PtcError):
        return False, _refusal(source)
    try:
        return True, discovery.call(source, method, args)
    except PtcError as error:
        return False, _refusal(error)
    except Exception as error:  # a discovery bug reaches the program as an error, not a host crash
        return False, _refusal(DiscoveryFailed(detail=f"{type(error).__name__}: {error}"))


def _refusal(error: PtcError) -> dict[str, str]:
    return {"code": error.code, "message": error.message()}


class DiscoveryDesk:
    """Answers one run's requests in order; ``respond(id, answer)`` gets each answer."""

    def __init__(self, source: DiscoverySource, respond: Callable[[int, Answer], None]) -> None:
        self._source = source
        self._respond = respond
        self._queue: collections.deque[tuple[int, str, dict[str, JSONValue]]] = collections.deque()
        self._task: asyncio.Task[None] | None = None

    def submit(self, request_id: int, method: str, args: dict[str, JSONValue]) -> None:
        self._queue.append((request_id, method, args))
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._serve())

    async def _serve(self) -> None:
        try:
            while self._queue:
                # One request per loop turn: timers (the run's deadline) and other runs keep running.
                await asyncio.sleep(0)
                request_id, method, args = self._queue.popleft()
                self._respond(request_id, answer(self._source, method, args))
        finally:
            self._task = None

    def close(self) -> None:
        """Drop waiting requests (the run settled; nobody can receive their answers)."""
        self._queue.clear()
        if self._task is not None:
            self._task.cancel()
