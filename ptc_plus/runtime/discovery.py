"""Discovery inside programs, host side: ``capabilities.*`` requests answered from one snapshot (ADR 0017).

A run is given its discovery source once, when it starts: a
:class:`~ptc_plus.capabilities.CatalogSnapshot`, or the
:class:`~ptc_plus.errors.PtcError` every request of the run fails with
(:class:`DiscoveryUnavailable` when the session has no discovery).
Requests are first checked against fixed bounds (:data:`MAX_QUERY_CHARS` per
phrasing, :data:`MAX_PHRASINGS`, :data:`MAX_INSPECT_NAMES`, :data:`MAX_NAME_CHARS`, :data:`MAX_REQUEST_LIMIT`;
ADR 0042) and refused with :class:`DiscoveryRequestTooLarge` beyond them,
then served by :func:`ptc_plus.discovery.api.call` in one shared
worker thread, in arrival order per run, so a slow request stalls neither the
event loop (the run's timer, other runs) nor anything but other discovery
requests. A run that settles stops waiting at once; the request already in
the thread finishes there (bounded by the limits above) and is dropped.
They are never tool calls: no dispatch, no guard, no lane, no session log
entry, no use. A source built with an :data:`ExpansionSink` also reports,
from that thread, which contracts each answer delivered in full (the session
offers them to the model as an expansion message; ADR 0070).
"""

from __future__ import annotations

import asyncio
import collections
import logging
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import ParamSpec, TypeVar

import attrs

from hookspecs import AgentRef, JSONValue
from ptc_plus import discovery
from ptc_plus.discovery import CatalogSnapshot
from ptc_plus.errors import PtcError
from ptc_plus.runtime.errors import DiscoveryFailed, DiscoveryRequestTooLarge, DiscoveryUnavailable

_log = logging.getLogger(__name__)
P = ParamSpec("P")
T = TypeVar("T")

MAX_QUERY_CHARS = 1000
"""Longest ``query`` of ``search``/``find`` (characters)."""
MAX_PHRASINGS = 8
"""Most phrasings one ``search`` may give as a list (each at most :data:`MAX_QUERY_CHARS`; ADR 0104)."""
MAX_INSPECT_NAMES = 200
"""Most names one ``inspect`` may ask for."""
MAX_NAME_CHARS = 300
"""Longest single name given to ``inspect``."""
MAX_REQUEST_LIMIT = 200
"""Largest ``limit`` of ``search``/``find``/``tree``."""

# One thread for every run's discovery: the snapshot's token counter is not promised to be
# thread-safe, and a request is bounded, so one at a time is enough.
_EXECUTOR = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ptc-discovery")

DiscoveryProvider = Callable[[AgentRef], CatalogSnapshot | None]
"""What ``run_code_definition(discovery=...)`` takes: the caller's snapshot, or ``None`` (no discovery)."""

ExpansionSink = Callable[[AgentRef, Sequence[tuple[str, str]]], None]
"""Told ``(identity, revision)`` of every contract one answer for ``agent`` delivered in full (never the mere
references). Called in the discovery thread, so it must hand over thread-safely; what it raises is logged."""


@attrs.frozen
class Reported:
    """A snapshot whose answers report the contracts they expanded to ``report``."""

    snapshot: CatalogSnapshot
    report: Callable[[Sequence[tuple[str, str]]], None] = attrs.field(eq=False)


DiscoverySource = CatalogSnapshot | Reported | PtcError
"""A run's discovery: the snapshot it answers from (maybe reported), or the error every request gets."""

Answer = tuple[bool, JSONValue]
"""``(True, response)`` or ``(False, {"code", "message"})``."""


def source_for(
    provider: DiscoveryProvider | None, agent: AgentRef, expanded: ExpansionSink | None = None
) -> DiscoverySource:
    """Ask ``provider`` once for ``agent``'s snapshot; a missing provider or ``None`` means unavailable.

    A provider that raises does not fail the run: its programs get :class:`DiscoveryFailed`.
    With ``expanded``, the run's answers report what they expanded to it, for ``agent``.
    """
    if provider is None:
        return DiscoveryUnavailable()
    try:
        snapshot = provider(agent)
    except PtcError as error:
        return error
    except Exception as error:  # the provider's bug must not take run_code down with it
        _log.exception("discovery provider failed for agent %s; its programs get discovery-failed", agent.agent_id)
        return DiscoveryFailed(detail=f"{type(error).__name__}: {error}")
    if snapshot is None:
        return DiscoveryUnavailable()
    if expanded is None:
        return snapshot
    return Reported(snapshot, lambda contracts: expanded(agent, contracts))


def answer(source: DiscoverySource, method: str, args: dict[str, JSONValue]) -> Answer:
    """Serve one request; a refused argument is an answer (the program catches it), never a raise."""
    if isinstance(source, PtcError):
        return False, _refusal(source)
    snapshot = source.snapshot if isinstance(source, Reported) else source
    try:
        check_bounds(method, args)
        response = discovery.call(snapshot, method, args)
    except PtcError as error:
        return False, _refusal(error)
    except Exception as error:  # a discovery bug reaches the program as an error, not a host crash
        _log.exception("discovery request %r failed", method)
        return False, _refusal(DiscoveryFailed(detail=f"{type(error).__name__}: {error}"))
    if isinstance(source, Reported) and (contracts := expanded_contracts(response)):
        try:
            source.report(contracts)
        except Exception:  # the session's bookkeeping must not cost the program its answer
            _log.exception("reporting the contracts a discovery answer expanded failed")
    return True, response


def expanded_contracts(response: JSONValue) -> tuple[tuple[str, str], ...]:
    """``(identity, revision)`` of the complete contracts a ``search``/``inspect`` response delivered."""
    items = response.get("expanded") if isinstance(response, dict) else None
    if not isinstance(items, list):
        return ()
    return tuple(
        (item["identity"], item["revision"])
        for item in items
        if isinstance(item, dict) and isinstance(item.get("identity"), str) and isinstance(item.get("revision"), str)
    )


def check_bounds(method: str, args: dict[str, JSONValue]) -> None:
    """Refuse a request whose size could make serving it slow; wrong types are left to discovery.

    :raises DiscoveryRequestTooLarge: an argument beyond its bound.
    """
    query = args.get("query")
    if isinstance(query, list):
        if len(query) > MAX_PHRASINGS:
            raise DiscoveryRequestTooLarge(method=method, argument="phrasings", size=len(query), limit=MAX_PHRASINGS)
        phrasings = query
    else:
        phrasings = [query]
    for phrasing in phrasings:
        if isinstance(phrasing, str) and len(phrasing) > MAX_QUERY_CHARS:
            raise DiscoveryRequestTooLarge(method=method, argument="query", size=len(phrasing), limit=MAX_QUERY_CHARS)
    limit = args.get("limit")
    if isinstance(limit, int) and not isinstance(limit, bool) and limit > MAX_REQUEST_LIMIT:
        raise DiscoveryRequestTooLarge(method=method, argument="limit", size=limit, limit=MAX_REQUEST_LIMIT)
    names = args.get("names")
    if isinstance(names, list):
        if len(names) > MAX_INSPECT_NAMES:
            raise DiscoveryRequestTooLarge(method=method, argument="names", size=len(names), limit=MAX_INSPECT_NAMES)
        for name in names:
            if isinstance(name, str) and len(name) > MAX_NAME_CHARS:
                raise DiscoveryRequestTooLarge(method=method, argument="name", size=len(name), limit=MAX_NAME_CHARS)


async def in_discovery_thread(fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """Run ``fn`` in the one discovery thread every run's requests share (for discovery served outside a
    run, like ``mcp-serve``'s ``search_capabilities``): off the event loop, never beside another request."""
    return await asyncio.get_running_loop().run_in_executor(_EXECUTOR, lambda: fn(*args, **kwargs))


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
        loop = asyncio.get_running_loop()
        try:
            while self._queue:
                request_id, method, args = self._queue.popleft()
                reply = await loop.run_in_executor(_EXECUTOR, answer, self._source, method, args)
                self._respond(request_id, reply)
        finally:
            self._task = None

    def close(self) -> None:
        """Drop waiting requests (the run settled; nobody can receive their answers)."""
        self._queue.clear()
        if self._task is not None:
            self._task.cancel()
