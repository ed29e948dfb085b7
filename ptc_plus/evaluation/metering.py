"""Metering of model requests exactly as the host sends them: cached input, uncached input, output.

A request is a sequence of *parts* in the order a provider receives them: the
system text, then each tool schema (name, description and input schema as
canonical JSON), then each chat message (canonical JSON). Its input tokens are
the sum of its parts' ``o200k_base`` counts (:data:`UNIT`).

The cached share models a provider's prompt cache: the parts that form the
longest common prefix with the *previous request of the same session* are
cached; a session's first request is all uncached. A change anywhere (a new
tool schema in the middle, an edited system prompt) uncaches everything after
it, as a real prefix cache would. Output tokens are the answer's text plus
each tool call as canonical JSON.

Real-model mode (:func:`meter_provider`) takes the provider's own numbers
instead; what the provider did not report stays ``None``, and any sum that
contains an unknown is unknown: never a zero.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
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
    """

    def __init__(self, counter: TokenCounter | None = None) -> None:
        self._counter = counter or _o200k()
        self._counts: dict[bytes, int] = {}
        # A host hands the same ToolSpec objects to every request; keeping the object pins its id.
        self._specs: dict[int, tuple[ToolSpec, bytes]] = {}

    def count(self, text: bytes | str) -> int:
        """The token count of ``text`` (memoized by its bytes)."""
        data = text.encode("utf-8") if isinstance(text, str) else text
        known = self._counts.get(data)
        if known is None:
            known = self._counter.count(data.decode("utf-8"))
            self._counts[data] = known
        return known

    def parts(self, request: ModelRequest) -> list[bytes]:
        """The request's parts in the order they are sent: system, tool schemas, messages."""
        found = [request.system.encode("utf-8")]
        found.extend(self._spec_part(spec) for spec in request.tools)
        found.extend(message_part(message) for message in request.messages)
        return found

    def _spec_part(self, spec: ToolSpec) -> bytes:
        held = self._specs.get(id(spec))
        if held is not None and held[0] is spec:
            return held[1]
        part = spec_part(spec)
        self._specs[id(spec)] = (spec, part)
        return part

    def output(self, answer: AssistantTurn) -> int:
        """Tokens of the answer: its text plus each tool call as canonical JSON."""
        counted = self.count(answer.text) if answer.text else 0
        return counted + sum(self.count(call_part(call.tool, call.arguments)) for call in answer.tool_calls)

    def meter(self, exchanges: Sequence[Exchange]) -> RunMeter:
        """Scripted mode: every request counted from its content, cached share by the prefix rule."""
        previous: dict[str, list[bytes]] = {}
        metered: list[RequestMeter] = []
        for exchange in exchanges:
            parts = self.parts(exchange.request)
            before = previous.get(exchange.session_id, [])
            shared = _common_prefix(before, parts)
            counts = [self.count(part) for part in parts]
            previous[exchange.session_id] = parts
            cached, uncached = sum(counts[:shared]), sum(counts[shared:])
            metered.append(
                RequestMeter(
                    session_id=exchange.session_id,
                    input=cached + uncached,
                    input_cached=cached,
                    input_uncached=uncached,
                    output=self.output(exchange.answer),
                )
            )
        return _run_meter(exchanges, metered)


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


def _common_prefix(a: Sequence[bytes], b: Sequence[bytes]) -> int:
    shared = 0
    for left, right in zip(a, b, strict=False):
        if left != right:
            break
        shared += 1
    return shared


class TokenizerUnavailable(PtcError):
    """The ``o200k_base`` tokenizer cannot be loaded: scripted numbers in another unit would be mislabelled.

    :ivar params: ``unit`` (what the fallback counter counts in).
    """

    code = "PTC-7424"


def _o200k() -> TokenCounter:
    counter = offline_counter()
    if not counter.unit.startswith("o200k"):
        raise TokenizerUnavailable(unit=counter.unit)
    return counter


__all__ = [
    "PROVIDER_UNIT",
    "UNIT",
    "Exchange",
    "Meter",
    "RequestMeter",
    "RunMeter",
    "TokenizerUnavailable",
    "Totals",
    "call_part",
    "family_roots",
    "message_part",
    "meter_provider",
    "provider_request",
    "spec_part",
    "total",
]
