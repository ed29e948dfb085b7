"""Metering of model requests exactly as the host sends them: cached input, uncached input, output.

A request is a sequence of *parts* in the order a provider receives them: the
host's own system prompt (the coding agent's instructions a real host sends
before anything else, :mod:`.host_prompt`; absent when the setting is 0), the
system text, then each tool schema (name, description and input schema as
canonical JSON), then each chat message (canonical JSON). Its input tokens are
the sum of its parts' ``o200k_base`` counts (:data:`UNIT`).

The cached share models a provider's prompt cache (ADR 0096): the parts that
form the longest common prefix with *any earlier request of the same run* (any
session of the family: a child agent sending the same system prompt and tools
as its parent reuses the parent's cache) are cached, when that prefix holds at
least :data:`MIN_CACHEABLE_PREFIX` tokens; a shorter prefix is not cached at
all. A change anywhere (a new tool schema in the middle, an edited system
prompt) uncaches everything after it, as a real prefix cache would. A request
of at least that many tokens writes its uncached tokens into the cache
(``input_written``, priced by a sheet with a cache-write surcharge). Output
tokens are the answer's text plus each tool call as canonical JSON.

The run's own directory (whose path holds the user's ``TMPDIR`` and uid) is
replaced in every part and answer by one fixed path (:data:`STAND_IN_ROOT`), so
the counts do not depend on who runs them where.

Real-model mode (:func:`meter_provider`) takes the provider's own numbers
instead; what the provider did not report stays ``None``, and any sum that
contains an unknown is unknown: never a zero.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from hookspecs.reference import AssistantTurn, ModelRequest
from hookspecs.serialization import canonical_bytes
from hookspecs.services import TokenCounter
from hookspecs.types import ToolSpec
from ptc_plus.capabilities import offline_counter
from ptc_plus.errors import PtcError
from ptc_plus.evaluation.exchange import Exchange, ProviderUsage

UNIT = "o200k tokens (counted per request part)"
"""The unit every scripted-mode number is in."""

PROVIDER_UNIT = "provider-reported tokens"
"""The unit of real-model mode: whatever the provider's tokenizer counted."""

MIN_CACHEABLE_PREFIX = 1024
"""Tokens a shared prefix must hold to be served from the cache (providers publish 1,024 as their minimum)."""

STAND_IN_ROOT = "/eval"
"""What the run directory's path is metered as, instead of ``$TMPDIR/ptc-plus-eval-<uid>``: the workspace becomes
``/eval/run/workspace``, as long as a user's ``/home/<name>/src/<repo>``, and the same path the runner writes
into recorded requests (``runner.PORTABLE_RUN`` is ``/eval/run``), so the two rewrites agree. The meter's also
covers what that one does not reach: tool schemas, answers, and the path as given when it differs from the
resolved one (a symlinked ``TMPDIR``)."""


def _add(a: int | None, b: int | None) -> int | None:
    return None if a is None or b is None else a + b


@attrs.frozen(kw_only=True)
class RequestMeter:
    """The tokens of one request. ``None`` only in real-model mode, where the provider did not say."""

    session_id: str
    input: int | None
    """Every input token; a provider may report it without saying how much of it was cached."""
    input_cached: int | None
    input_uncached: int | None
    output: int | None
    input_written: int | None = None
    """The uncached tokens this request writes into the prompt cache (unknown in real-model mode)."""

    @property
    def total(self) -> int | None:
        return _add(self.input, self.output)


@attrs.frozen(kw_only=True)
class Totals:
    """A sum over requests; a field is ``None`` when any request's share of it is unknown."""

    requests: int = 0
    input: int | None = 0
    input_cached: int | None = 0
    input_uncached: int | None = 0
    output: int | None = 0
    input_written: int | None = 0

    @property
    def total(self) -> int | None:
        return _add(self.input, self.output)

    def plus(self, request: RequestMeter | Totals) -> Totals:
        added = request.requests if isinstance(request, Totals) else 1
        return Totals(
            requests=self.requests + added,
            input=_add(self.input, request.input),
            input_cached=_add(self.input_cached, request.input_cached),
            input_uncached=_add(self.input_uncached, request.input_uncached),
            output=_add(self.output, request.output),
            input_written=_add(self.input_written, request.input_written),
        )


def total(meters: Iterable[RequestMeter]) -> Totals:
    """The sum of ``meters`` (unknown stays unknown)."""
    return functools.reduce(Totals.plus, meters, Totals())


@attrs.frozen(kw_only=True)
class RunMeter:
    """The metering of one task run.

    :ivar requests: per exchange, in order.
    :ivar total: every request of the run: main agent, children, discovery, retries.
    :ivar families: per root session id, the total of that root and all its descendants.
    :ivar first_request_input: input tokens of the run's first request (the prompt size a catalog costs).
    """

    requests: tuple[RequestMeter, ...]
    total: Totals
    families: Mapping[str, Totals]
    first_request_input: int | None


class Meter:
    """Counts requests in :data:`UNIT`, memoized by content so a 2,000-schema catalog is counted once.

    One instance may meter many runs; the memo only grows with distinct parts.

    :param host_prompt: the host's system prompt, sent first in every request (``""``: none).
    :param run_root: the run directory whose path is metered as :data:`STAND_IN_ROOT` (``None``: no rewrite).
    :param min_prefix: the minimum cacheable prefix in tokens (:data:`MIN_CACHEABLE_PREFIX`).
    """

    def __init__(
        self,
        counter: TokenCounter | None = None,
        *,
        host_prompt: str = "",
        run_root: Path | None = None,
        min_prefix: int = MIN_CACHEABLE_PREFIX,
    ) -> None:
        self._counter = counter or o200k_counter()
        self._counts: dict[bytes, int] = {}
        # A host hands the same ToolSpec objects to every request; keeping the object pins its id.
        self._specs: dict[int, tuple[ToolSpec, bytes]] = {}
        self._host_prompt = host_prompt.encode("utf-8")
        self._min_prefix = min_prefix
        self._stand_ins = _stand_ins(run_root)

    def count(self, text: bytes | str) -> int:
        """The token count of ``text`` (memoized by its bytes)."""
        data = text.encode("utf-8") if isinstance(text, str) else text
        known = self._counts.get(data)
        if known is None:
            known = self._counter.count(data.decode("utf-8"))
            self._counts[data] = known
        return known

    def parts(self, request: ModelRequest) -> list[bytes]:
        """The request's parts in the order they are sent: host prompt (if any), system, tool schemas, messages."""
        found = [self._host_prompt] if self._host_prompt else []
        found.append(self._normal(request.system.encode("utf-8")))
        found.extend(self._spec_part(spec) for spec in request.tools)
        found.extend(self._normal(message_part(message)) for message in request.messages)
        return found

    def _normal(self, part: bytes) -> bytes:
        # Longest first: the resolved path may extend the given one (a symlinked TMPDIR).
        for path, stand_in in self._stand_ins:
            if path in part:
                part = part.replace(path, stand_in)
        return part

    def _spec_part(self, spec: ToolSpec) -> bytes:
        held = self._specs.get(id(spec))
        if held is not None and held[0] is spec:
            return held[1]
        part = self._normal(spec_part(spec))
        self._specs[id(spec)] = (spec, part)
        return part

    def output(self, answer: AssistantTurn) -> int:
        """Tokens of the answer: its text plus each tool call as canonical JSON."""
        counted = self.count(self._normal(answer.text.encode("utf-8"))) if answer.text else 0
        return counted + sum(
            self.count(self._normal(call_part(call.tool, call.arguments))) for call in answer.tool_calls
        )

    def meter(self, exchanges: Sequence[Exchange]) -> RunMeter:
        """Scripted mode: every request counted from its content, cached share by the run's prefix cache."""
        cache = PrefixCache()
        metered: list[RequestMeter] = []
        for exchange in exchanges:
            parts = self.parts(exchange.request)
            counts = [self.count(part) for part in parts]
            shared = cache.match(parts)
            cached = sum(counts[:shared])
            if cached < self._min_prefix:
                cached, shared = 0, 0  # below the minimum a provider caches nothing of the prefix
            uncached = sum(counts[shared:])
            written = uncached if cached + uncached >= self._min_prefix else 0
            cache.add(parts)
            metered.append(
                RequestMeter(
                    session_id=exchange.session_id,
                    input=cached + uncached,
                    input_cached=cached,
                    input_uncached=uncached,
                    output=self.output(exchange.answer),
                    input_written=written,
                )
            )
        return _run_meter(exchanges, metered)


class PrefixCache:
    """The prompt cache of one run: every part-prefix of the requests sent so far, as a trie of parts.

    A request sent later matches the longest prefix any earlier request (of any session) shares with it;
    walking and inserting cost one step per part, so a 2,000-schema request is not compared with each
    earlier one.
    """

    def __init__(self) -> None:
        self._root: dict[bytes, Any] = {}

    def match(self, parts: Sequence[bytes]) -> int:
        """How many leading parts of ``parts`` some earlier request began with."""
        node, shared = self._root, 0
        for part in parts:
            child = node.get(part)
            if child is None:
                break
            node, shared = child, shared + 1
        return shared

    def add(self, parts: Sequence[bytes]) -> None:
        """Remember ``parts`` (and so each of its prefixes) as cached for the requests after it."""
        node = self._root
        for part in parts:
            node = node.setdefault(part, {})


def _stand_ins(root: Path | None) -> tuple[tuple[bytes, bytes], ...]:
    if root is None:
        return ()
    seen = {str(root), os.path.realpath(root)}
    stand_in = STAND_IN_ROOT.encode("utf-8")
    return tuple((path.encode("utf-8"), stand_in) for path in sorted(seen, key=len, reverse=True))


def meter_provider(exchanges: Sequence[Exchange]) -> RunMeter:
    """Real-model mode: the provider's numbers per request; a request without usage is all unknown."""
    metered = []
    for exchange in exchanges:
        metered.append(provider_request(exchange.session_id, exchange.usage))
    return _run_meter(exchanges, metered)


def provider_request(session_id: str, usage: ProviderUsage | None) -> RequestMeter:
    """One request from the provider's usage; uncached = input - cached, known only when both are."""
    if usage is None:
        return RequestMeter(session_id=session_id, input=None, input_cached=None, input_uncached=None, output=None)
    uncached = None if usage.input is None or usage.cached_input is None else usage.input - usage.cached_input
    return RequestMeter(
        session_id=session_id,
        input=usage.input,
        input_cached=usage.cached_input,
        input_uncached=uncached,
        output=usage.output,
    )


def _run_meter(exchanges: Sequence[Exchange], metered: list[RequestMeter]) -> RunMeter:
    roots = family_roots(exchanges)
    families: dict[str, Totals] = {}
    for exchange, request in zip(exchanges, metered, strict=True):
        root = roots[exchange.session_id]
        families[root] = families.get(root, Totals()).plus(request)
    return RunMeter(
        requests=tuple(metered),
        total=total(metered),
        families=families,
        first_request_input=metered[0].input if metered else None,
    )


def family_roots(exchanges: Sequence[Exchange]) -> dict[str, str]:
    """Per session id, the id of its family's root (a session whose parent is absent is a root)."""
    parents: dict[str, str | None] = {}
    for exchange in exchanges:
        parents.setdefault(exchange.session_id, exchange.parent_session_id)
    roots: dict[str, str] = {}
    for session in parents:
        current, seen = session, {session}
        while (parent := parents.get(current)) is not None and parent not in seen:
            seen.add(parent)
            current = parent
        # A parent that made no request itself (it only started the child) is still the family's root.
        roots[session] = current
    return roots


def spec_part(spec: ToolSpec) -> bytes:
    """A tool schema as the model receives it: name, description and input schema, canonical JSON."""
    return canonical_bytes({"name": spec.name, "description": spec.description, "input_schema": spec.input_schema})


def message_part(message: Mapping[str, Any]) -> bytes:
    """A chat message as canonical JSON."""
    return canonical_bytes(message)


def call_part(tool: str, arguments: Mapping[str, Any]) -> bytes:
    """A tool call of an answer as canonical JSON."""
    return canonical_bytes({"name": tool, "arguments": arguments})


class TokenizerUnavailable(PtcError):
    """The ``o200k_base`` tokenizer cannot be loaded: scripted numbers in another unit would be mislabelled.

    :ivar params: ``unit`` (what the fallback counter counts in).
    """

    code = "PTC-7424"


def o200k_counter() -> TokenCounter:
    """The project's ``o200k_base`` counter. Raises :class:`TokenizerUnavailable` without it."""
    counter = offline_counter()
    if not counter.unit.startswith("o200k"):
        raise TokenizerUnavailable(unit=counter.unit)
    return counter


__all__ = [
    "MIN_CACHEABLE_PREFIX",
    "PROVIDER_UNIT",
    "STAND_IN_ROOT",
    "UNIT",
    "Exchange",
    "Meter",
    "PrefixCache",
    "RequestMeter",
    "RunMeter",
    "TokenizerUnavailable",
    "Totals",
    "call_part",
    "family_roots",
    "message_part",
    "meter_provider",
    "o200k_counter",
    "provider_request",
    "spec_part",
    "total",
]
