"""The scripted model of the evaluation: a hookspecs.reference model that advances a task's script.

One :class:`ScriptDriver` drives one session. Every model request it gets,
it first reads the result of the step it asked for last (the ``role: tool``
message answering its call id, exactly what the model read) and, unless that
step was one the driver inserted itself, sends it to the script as an
:class:`~ptc_plus.evaluation.task.Observation`. Then it answers with the
script's next action, inserting what a model that reads its request would do
first:

- native + tool search: a ``tool_search`` call (``queries[tool]``) before a call
  to a tool whose schema the request does not carry;
- code styles: one discovery program (``capabilities.search(queries[tool])`` for
  each such tool) before a program using tools whose full contract (its SDK stub,
  ``async def <name>(``) is in neither the system prompt nor a system message
  of the request — the catalog message, an expansion message.

Each insertion is made at most once per tool: if the contract is still not
shown afterwards, the script's step runs anyway and its observation says what
happened. Every (request, answer) pair is appended to the shared
:class:`ExchangeLog`, with the session's ids.
"""

from __future__ import annotations

import re
from collections.abc import Generator, Mapping
from typing import Any

import attrs
import orjson

from hookspecs.reference import AssistantTurn, Model, ModelRequest, RequestedCall
from hookspecs.types import JSONValue
from ptc_plus.evaluation.errors import (
    EvaluationError,
    QueryMissing,
    ScriptEndedWithoutAnswer,
    ScriptFailed,
    StepAfterAnswer,
    ToolResultMissing,
)
from ptc_plus.evaluation.exchange import Exchange, ProviderUsage
from ptc_plus.evaluation.task import Action, Answer, Call, Observation, Script, Style
from ptc_plus.sdk import to_identifier

RUN_CODE = "run_code"
TOOL_SEARCH = "tool_search"
"""The name of the search tool of the native + tool search style (:mod:`.tool_search`)."""


def discovery_program(*queries: str) -> str:
    """The program a model runs to find the tools it lacks: the in-program search (complete contracts),
    one search per query, all in one program (one round trip, as a model that knows what it lacks)."""
    if len(queries) == 1:
        return f"return await capabilities.search({queries[0]!r})"
    return "return [" + ", ".join(f"await capabilities.search({q!r})" for q in queries) + "]"


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


@attrs.frozen
class _Pending:
    """The step the driver asked for last: its call id, and whether the script is waiting for it."""

    call_id: str
    tool: str
    program: bool
    inserted: bool


class ScriptDriver:
    """A :class:`~hookspecs.reference.model.Model` that advances one task script in one style.

    :param task_id: for errors.
    :param script: the script (a fresh generator is made here).
    :param style: decides the insertions (tool search, discovery programs) and the call shapes.
    :param queries: per tool, the words searched with when the tool is not shown.
    :param log: where the exchanges go; :attr:`ids` say which session they belong to.
    :param call_prefix: call ids are ``<prefix>-<n>``: deterministic (the transcript is metered), and
        distinct per session of a family.
    """

    route = "scripted-eval"

    def __init__(
        self,
        *,
        task_id: str,
        script: Script,
        style: Style,
        queries: Mapping[str, str],
        log: ExchangeLog,
        ids: SessionIds | None = None,
        call_prefix: str = "call",
    ) -> None:
        self._task_id = task_id
        self._style = style
        self._queries = queries
        self._log = log
        self.ids = ids or SessionIds()
        self._script: Generator[Action, Observation, None] = script()
        self._action: Action | None = None
        self._pending: _Pending | None = None
        self._searched: set[str] = set()
        self._answered = False
        self._calls = 0
        self._prefix = call_prefix

    async def complete(self, request: ModelRequest) -> AssistantTurn:
        answer = self._step(request)
        self._log.add(
            session_id=self.ids.session_id,
            parent_session_id=self.ids.parent_session_id,
            request=request,
            answer=answer,
        )
        return answer

    def _step(self, request: ModelRequest) -> AssistantTurn:
        if self._answered:
            raise StepAfterAnswer(task=self._task_id)
        action = self._advance(request)
        if isinstance(action, Answer):
            self._answered = True
            return AssistantTurn(text=action.text)
        if isinstance(action, Call):
            if self._style in (Style.TOOL_SEARCH, Style.TOOL_SEARCH_MATURE):
                missing = self._unloaded(request, action.tool)
                if missing is not None:
                    return self._ask(TOOL_SEARCH, {"query": missing}, program=False, inserted=True)
            return self._ask(action.tool, dict(action.arguments), program=False, inserted=False)
        wanted = {tool: query for tool in action.uses if (query := self._undisclosed(request, tool)) is not None}
        if wanted:
            code = discovery_program(*dict.fromkeys(wanted.values()))
            arguments = {"code": code, "description": "Look up the contracts of " + ", ".join(wanted)}
            return self._ask(RUN_CODE, arguments, program=True, inserted=True)
        arguments = {"code": action.code, "description": action.description}
        return self._ask(RUN_CODE, arguments, program=True, inserted=False)

    def _advance(self, request: ModelRequest) -> Action:
        """The action to take now: the script's next one once the last scripted step's result is read."""
        pending, self._pending = self._pending, None
        try:
            if self._action is None:
                self._action = next(self._script)
            elif pending is not None and not pending.inserted:
                content = tool_result(request, pending.call_id)
                if content is None:
                    raise ToolResultMissing(call_id=pending.call_id, tool=pending.tool)
                self._action = self._script.send(observe(content, program=pending.program))
            elif pending is not None and tool_result(request, pending.call_id) is None:
                raise ToolResultMissing(call_id=pending.call_id, tool=pending.tool)
        except StopIteration:
            raise ScriptEndedWithoutAnswer(task=self._task_id, style=self._style.value) from None
        except EvaluationError:
            raise
        except Exception as exc:  # the script's own assertion: the run is broken, not a tool failure
            raise ScriptFailed(task=self._task_id, detail=f"{type(exc).__name__}: {exc}") from exc
        return self._action

    def _query(self, tool: str) -> str:
        query = self._queries.get(tool)
        if query is None:
            raise QueryMissing(task=self._task_id, tool=tool)
        return query

    def _unloaded(self, request: ModelRequest, tool: str) -> str | None:
        """The search words for ``tool`` when its schema is not in the request and was not searched for yet."""
        if tool in {spec.name for spec in request.tools} or tool in self._searched:
            return None
        self._searched.add(tool)
        return self._query(tool)

    def _undisclosed(self, request: ModelRequest, tool: str) -> str | None:
        """The search words for ``tool`` when its contract is not shown and was not looked up yet."""
        if tool in self._searched or contract_shown(request, tool):
            return None
        self._searched.add(tool)
        return self._query(tool)

    def _ask(self, tool: str, arguments: dict[str, Any], *, program: bool, inserted: bool) -> AssistantTurn:
        self._calls += 1
        call_id = f"{self._prefix}-{self._calls}"
        self._pending = _Pending(call_id=call_id, tool=tool, program=program, inserted=inserted)
        return AssistantTurn(tool_calls=(RequestedCall(tool=tool, arguments=arguments, call_id=call_id),))


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
