"""What every model of the evaluation shares: reading its requests, logging its exchanges.

The scripted model is :class:`~ptc_plus.evaluation.policy.PlanDriver` (a
task plan turned into each style's requests); a real model is wrapped in
:class:`RecordingModel`. Both append every (request, answer) pair to the
run's :class:`ExchangeLog` with the session's ids, and read tool results
from the ``role: tool`` messages answering their call ids
(:func:`tool_result`, :func:`observe`): exactly what the model read.
"""

from __future__ import annotations

import re

import attrs
import orjson

from hookspecs.reference import AssistantTurn, Model, ModelRequest
from hookspecs.types import JSONValue
from ptc_plus.evaluation.exchange import Exchange, ProviderUsage
from ptc_plus.evaluation.task import Observation
from ptc_plus.sdk import to_identifier

RUN_CODE = "run_code"
TOOL_SEARCH = "tool_search"
"""The name of the search tool of the native + tool search style (:mod:`.tool_search`)."""


def contract_shown(request: ModelRequest, tool: str) -> bool:
    """Whether ``request`` shows ``tool``'s full contract: its SDK stub in the system prompt or a system message."""
    pattern = re.compile(rf"async def {re.escape(to_identifier(tool))}\(")
    if pattern.search(request.system):
        return True
    return any(m.get("role") == "system" and pattern.search(str(m.get("content") or "")) for m in request.messages)


def observe(content: str, *, program: bool) -> Observation:
    """The observation of a tool result as the model read it (``content`` of its ``role: tool`` message).

    A failure reads ``{"error": code, "message": text}`` (the host's rendering); a program's success is
    ``run_code``'s envelope, whose ``value`` is what the program returned. Text that is not JSON (a
    preview standing in for a large result) is not a value the model has: a failed observation with it.
    """
    try:
        parsed = orjson.loads(content)
    except orjson.JSONDecodeError:
        return Observation(ok=False, error=content)
    if isinstance(parsed, dict) and set(parsed) == {"error", "message"} and isinstance(parsed["error"], str):
        return Observation(ok=False, error=content)
    if program:
        if isinstance(parsed, dict) and "value" in parsed:
            value: JSONValue = parsed["value"]
            return Observation(ok=True, value=value)
        return Observation(ok=False, error=content)
    return Observation(ok=True, value=parsed)


def tool_result(request: ModelRequest, call_id: str) -> str | None:
    """The content of the ``role: tool`` message answering ``call_id`` (the latest one), if any."""
    found: str | None = None
    for entry in request.messages:
        if entry.get("role") == "tool" and entry.get("tool_call_id") == call_id:
            found = str(entry.get("content") or "")
    return found


class ExchangeLog:
    """Every exchange of one run's family, in the order the models answered (children included)."""

    def __init__(self) -> None:
        self.exchanges: list[Exchange] = []

    def add(
        self,
        *,
        session_id: str,
        parent_session_id: str | None,
        request: ModelRequest,
        answer: AssistantTurn,
        usage: ProviderUsage | None = None,
    ) -> None:
        self.exchanges.append(
            Exchange(
                session_id=session_id,
                parent_session_id=parent_session_id,
                request=request,
                answer=answer,
                usage=usage,
            )
        )


@attrs.define
class SessionIds:
    """The ids of the session a model drives; set by whoever starts the session, before its first turn."""

    session_id: str = ""
    parent_session_id: str | None = None


class RecordingModel:
    """A real model route whose exchanges (and the provider's usage, when it reports one) enter a log.

    The route's own usage list (``usage``, as :class:`~hookspecs.reference.openai_client.OpenAIChatModel`
    keeps one) is read after each answer: a new entry is this request's usage; none means unknown.
    """

    def __init__(self, model: Model, *, log: ExchangeLog, ids: SessionIds | None = None) -> None:
        self._model = model
        self._log = log
        self.ids = ids or SessionIds()

    @property
    def route(self) -> str:
        return self._model.route

    async def complete(self, request: ModelRequest) -> AssistantTurn:
        reported = getattr(self._model, "usage", None)
        before = len(reported) if isinstance(reported, list) else 0
        answer = await self._model.complete(request)
        usage = None
        if isinstance(reported, list) and len(reported) > before:
            usage = provider_usage(reported[-1])
        self._log.add(
            session_id=self.ids.session_id,
            parent_session_id=self.ids.parent_session_id,
            request=request,
            answer=answer,
            usage=usage,
        )
        return answer


def provider_usage(reported: object) -> ProviderUsage:
    """A route's usage record as :class:`ProviderUsage`: the input is the prompt total the provider reported,
    else the sum of its parts when both are known, else unknown."""
    cached = _count(getattr(reported, "cached_input", None))
    uncached = _count(getattr(reported, "uncached_input", None))
    total = _count(getattr(reported, "input", None))
    if total is None and cached is not None and uncached is not None:
        total = cached + uncached
    return ProviderUsage(input=total, cached_input=cached, output=_count(getattr(reported, "output", None)))


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
