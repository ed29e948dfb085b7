"""The scripted policy: one task plan, turned by each style into what that style's model would send (ADR 0094).

A :class:`PlanDriver` is a :class:`~hookspecs.reference.model.Model` driving
one session. On every request it first reads the results of what it asked for
last (the ``role: tool`` messages answering its call ids: exactly what the
model read), then decides from the plan *and from the request* alone:

- native: every call whose dependencies are met in one response (a fan-out is
  one call per item); ``native-sequential`` sends one call per step, the bound
  on the other side. A tool not in the request's tools cannot be called: the
  run fails (native has no search).
- native + tool search: the same, and one ``tool_search`` per missing tool in
  the same response (the step's need, then the tool's name as words); a need
  no round finds fails the run. What it logs is the anchor's wire request
  (:func:`~ptc_plus.evaluation.tool_search.anchor_request`).
- code styles: a discovery program for every tool of the turn whose contract
  the request does not show (``search`` with the need, ``search`` with the
  name's words, ``inspect``; then the run fails), else a program for the steps
  that can run now (:mod:`.programs`). A reference with a path into the result
  of a tool without an output schema waits until a result of that tool is in
  the history: the program stops before it and returns the raw result (a
  probe). A contract the request carries whose result shape is stated as
  learned (:func:`~ptc_plus.sdk.learned_functions` over the text, ADR 0109)
  makes its fields known as a published output schema does: no probe.
  ``both`` calls a directly offered tool directly when it is the turn's only
  remaining step.
- derived values (:class:`~.task_plan.Derived`): native works them out (``fn``)
  and the next call's arguments or the answer carry the value; a program
  contains the function's ``code`` and calls it. A derived value whose code
  indexes result fields (``ast``: :func:`~.task_plan.indexed_fields`) needs its
  sources' shapes as a path does; over a fan-out of a tool of unknown shape the
  program first probes one call (the first item), so 200 raw results never
  enter the context to show one shape.

Retries: native re-sends a call after an error result, up to the step's
retries; code wraps the call in a retry loop. Every request is first checked
against the model's context: a larger one raises :class:`ContextExceeded`
(the run is not runnable at that catalog size, for every style alike).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs
import orjson

from hookspecs.reference import AssistantTurn, ModelRequest, RequestedCall
from hookspecs.types import JSONValue
from ptc_plus.evaluation.driver import RUN_CODE, TOOL_SEARCH, ExchangeLog, SessionIds, contract_shown, observe
from ptc_plus.evaluation.driver import tool_result as result_of
from ptc_plus.evaluation.errors import (
    ContextExceeded,
    NeedNotFound,
    PlanMissing,
    StepAfterAnswer,
    StepFailed,
    ToolResultMissing,
)
from ptc_plus.evaluation.metering import Meter
from ptc_plus.evaluation.programs import Returned, discovery, lookup, name_words, probe, program
from ptc_plus.evaluation.task import Style
from ptc_plus.evaluation.task_plan import (
    Argument,
    Derived,
    Item,
    Ref,
    Step,
    TaskPlan,
    Turn,
    dependencies,
    derived_values,
    indexed_fields,
    references,
    steps_of,
)
from ptc_plus.evaluation.tool_search import anchor_request
from ptc_plus.sdk import learned_functions, to_identifier

DEFAULT_CONTEXT_TOKENS = 128_000
"""The model's context in tokens when a run does not say (issue 27: a 128k model)."""

SEARCH_STYLES = frozenset({Style.TOOL_SEARCH, Style.TOOL_SEARCH_MATURE})
NATIVE_POLICY = frozenset({Style.NATIVE, Style.NATIVE_SEQUENTIAL, *SEARCH_STYLES})
SEARCH_ROUNDS = 2
"""Native tool search: the need's words, then the tool's name as words."""
DISCOVERY_ROUNDS = 3
"""Code styles: search with the need's words, search with the name's words, ``inspect``."""


@attrs.frozen
class _Pending:
    """A call the driver made: ``kind`` is ``step`` (one call of a step), ``search``, ``discovery`` or
    ``program``; ``step`` and ``index`` name the step call; ``returns`` what a program returns."""

    call_id: str
    kind: str
    step: str = ""
    index: int | None = None
    returns: tuple[Returned, ...] = ()
    steps: tuple[str, ...] = ()


class PlanDriver:
    """A :class:`~hookspecs.reference.model.Model` that runs one task plan in one style.

    :param plan: the session's plan; ``None`` for a child, which finds its plan in ``children`` by the
        prompt it receives.
    :param output_schemas: per tool name, whether its contract declares an output schema.
    :param context_tokens: the model's context; a larger request raises :class:`ContextExceeded`.
    :param meter: counts request sizes (shared by a run's drivers; its counts are memoized).
    :param sized_as: the request as it is metered (the run's directory written portably); sizes are of that.
    """

    route = "scripted-eval"

    def __init__(
        self,
        *,
        task_id: str,
        plan: TaskPlan | None,
        style: Style,
        log: ExchangeLog,
        ids: SessionIds | None = None,
        call_prefix: str = "call",
        children: Mapping[str, TaskPlan] | None = None,
        output_schemas: Mapping[str, bool] | None = None,
        context_tokens: int = DEFAULT_CONTEXT_TOKENS,
        meter: Meter | None = None,
        sized_as: Callable[[ModelRequest], ModelRequest] | None = None,
    ) -> None:
        self._task_id = task_id
        self._plan = plan
        self._style = style
        self._log = log
        self.ids = ids or SessionIds()
        self._prefix = call_prefix
        self._children = dict(children or {})
        self._schemas = dict(output_schemas or {})
        self._context = context_tokens
        self._meter = meter or Meter()
        self._sized_as = sized_as
        self._calls = 0
        self._turn = -1
        self._answered = False
        self._values: dict[str, JSONValue] = {}
        self._reads: dict[Ref, JSONValue] = {}
        self._partial: dict[str, dict[int, JSONValue]] = {}
        self._attempts: dict[tuple[str, int | None], int] = {}
        self._pending: list[_Pending] = []
        self._rounds: dict[str, int] = {}
        self._seen: set[str] = set()
        self._learned: frozenset[str] = frozenset()
        self._discovery_calls: list[str] = []
        self._indirect: set[str] = set()

    # -- the model protocol ----------------------------------------------------------------------------

    async def complete(self, request: ModelRequest) -> AssistantTurn:
        wire = anchor_request(request) if self._style in SEARCH_STYLES else request
        sized = wire if self._sized_as is None else self._sized_as(wire)
        size = sum(self._meter.count(part) for part in self._meter.parts(sized))
        if size > self._context:
            raise ContextExceeded(style=self._style.value, tokens=size, limit=self._context)
        answer = self._step(request)
        self._log.add(
            session_id=self.ids.session_id, parent_session_id=self.ids.parent_session_id, request=wire, answer=answer
        )
        return answer

    def _step(self, request: ModelRequest) -> AssistantTurn:
        plan = self._plan_for(request)
        turn_index = sum(1 for m in request.messages if m.get("role") == "user") - 1
        if turn_index != self._turn:
            self._turn, self._answered = turn_index, False
        elif self._answered:
            raise StepAfterAnswer(task=self._task_id)
        if not 0 <= turn_index < len(plan.turns):
            raise PlanMissing(task=self._task_id, prompt=f"turn {turn_index + 1}")
        self._read(request, plan)
        turn = plan.turns[turn_index]
        remaining = [s for s in turn.steps if s.id not in self._values]
        if not remaining:
            self._answered = True
            return AssistantTurn(text=turn.answer(tuple(self._read_value(r) for r in turn.reads)))
        if self._style in NATIVE_POLICY:
            return self._native(request, remaining)
        return self._code(request, plan, turn, remaining)

    def _plan_for(self, request: ModelRequest) -> TaskPlan:
        if self._plan is None:
            prompt = next((str(m.get("content")) for m in request.messages if m.get("role") == "user"), "")
            found = self._children.get(prompt)
            if found is None:
                raise PlanMissing(task=self._task_id, prompt=prompt)
            self._plan = found
        return self._plan

    # -- reading what the last answer's calls returned --------------------------------------------------

    def _read(self, request: ModelRequest, plan: TaskPlan) -> None:
        by_id = {s.id: s for s in steps_of(plan)}
        pending, self._pending = self._pending, []
        for sent in pending:
            content = result_of(request, sent.call_id)
            if content is None:
                raise ToolResultMissing(call_id=sent.call_id, tool=sent.kind)
            if sent.kind == "step":
                self._read_step(by_id[sent.step], sent.index, content)
            elif sent.kind == "program":
                self._read_program(sent, by_id, content)
            elif sent.kind == "probe":
                self._read_probe(sent, by_id, content)
            # A search's or a discovery's answer is read from the request itself when deciding.

    def _read_step(self, step: Step, index: int | None, content: str) -> None:
        seen = observe(content, program=False)
        if not seen.ok and self._style not in NATIVE_POLICY and _previewed(content) and step.tool not in self._seen:
            # ``both``: a direct call's result too large for the context; its preview shows the shape, and the
            # step runs again in a program that works the values out inside.
            self._seen.add(step.tool)
            self._indirect.add(step.id)
            return
        if not seen.ok:
            key = (step.id, index)
            self._attempts[key] = self._attempts.get(key, 0) + 1
            if self._attempts[key] > step.retries:
                raise StepFailed(task=self._task_id, step=step.id, detail=seen.error)
            return  # not recorded: the next decision sends the call again
        self._seen.add(step.tool)
        if index is None:
            self._values[step.id] = seen.value
            return
        items = self._partial.setdefault(step.id, {})
        items[index] = seen.value
        if len(items) == len(self._items(step)):
            self._values[step.id] = [items[i] for i in range(len(items))]

    def _read_program(self, sent: _Pending, by_id: Mapping[str, Step], content: str) -> None:
        seen = observe(content, program=True)
        if not seen.ok and _previewed(content):
            # Too large to return whole: the host showed a preview. Its head shows the shape of the raw results
            # the program returned, not their values: the next program runs the steps again and works the
            # values out inside. A preview that shows no new shape cannot help: the run fails.
            raw = {by_id[e.step].tool for e in sent.returns if not e.path and e.derived is None}
            if raw - self._seen:
                self._seen |= raw
                return
        if not seen.ok or not isinstance(seen.value, dict):
            raise StepFailed(task=self._task_id, step=",".join(sent.steps), detail=seen.error or str(seen.value))
        for entry in sent.returns:
            value = seen.value[entry.key]
            if entry.derived is not None:
                self._reads[entry.derived] = value
            elif entry.path:
                self._reads[Ref(entry.step, entry.path)] = value
            else:
                self._values[entry.step] = value
                self._seen.add(by_id[entry.step].tool)  # a raw result of the tool is now in the history
        for step_id in sent.steps:
            # A step the program ran whose whole result nobody needs later is done all the same.
            self._values.setdefault(step_id, None)

    def _read_probe(self, sent: _Pending, by_id: Mapping[str, Step], content: str) -> None:
        seen = observe(content, program=True)
        if not seen.ok:
            raise StepFailed(task=self._task_id, step=",".join(sent.steps), detail=seen.error)
        # Not the steps' results (one item of each): the shape of their tools' results is now in the history.
        self._seen.update(by_id[step].tool for step in sent.steps)

    def _read_value(self, ref: Ref) -> JSONValue:
        if ref in self._reads:
            return self._reads[ref]
        return self._resolve(ref, None)

    # -- native ---------------------------------------------------------------------------------------

    def _items(self, step: Step) -> list[JSONValue]:
        if step.each is None:
            return []
        if isinstance(step.each, Ref):
            found = self._resolve(step.each, None)
            return list(found) if isinstance(found, list) else []
        return list(step.each)

    def _ready(self, remaining: Sequence[Step]) -> list[Step]:
        return [s for s in remaining if dependencies(s) <= self._values.keys()]

    def _native(self, request: ModelRequest, remaining: Sequence[Step]) -> AssistantTurn:
        calls: list[tuple[Step, int | None, dict[str, Any]]] = []
        for step in self._ready(remaining):
            if step.each is None:
                calls.append((step, None, self._resolve(step.arguments, None)))
                continue
            items = self._items(step)
            if not items:
                self._values[step.id] = []
                continue
            done = self._partial.get(step.id, {})
            calls += [(step, i, self._resolve(step.arguments, item)) for i, item in enumerate(items) if i not in done]
        if not calls:  # only empty fan-outs were ready: decide again with them done
            return self._step_again(request)
        if self._style is Style.NATIVE_SEQUENTIAL:
            calls = calls[:1]
        offered = {spec.name for spec in request.tools}
        requested: list[RequestedCall] = []
        searched: set[str] = set()
        for step, index, arguments in calls:
            if step.tool in offered:
                requested.append(self._ask(step.tool, arguments, _Pending("", "step", step.id, index)))
            elif step.tool not in searched:
                searched.add(step.tool)
                requested.append(self._search(step))
        return AssistantTurn(tool_calls=tuple(requested))

    def _step_again(self, request: ModelRequest) -> AssistantTurn:
        return self._step(request)

    def _search(self, step: Step) -> RequestedCall:
        rounds = self._rounds.get(step.tool, 0)
        if self._style not in SEARCH_STYLES or rounds >= SEARCH_ROUNDS:
            raise NeedNotFound(task=self._task_id, step=step.id, tool=step.tool)
        self._rounds[step.tool] = rounds + 1
        query = step.need if rounds == 0 else name_words(step.tool)
        return self._ask(TOOL_SEARCH, {"query": query}, _Pending("", "search"))

    def _resolve(self, value: Argument, item: JSONValue) -> Any:
        if isinstance(value, Derived):  # the model works it out from the results it read
            return value.fn(*(lookup(self._values[s.step], s.path) for s in value.sources))
        if isinstance(value, Ref):
            return lookup(self._values[value.step], value.path)
        if isinstance(value, Item):
            return lookup(item, value.path)
        if isinstance(value, Mapping):
            return {k: self._resolve(v, item) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self._resolve(v, item) for v in value]
        return value

    # -- code -----------------------------------------------------------------------------------------

    def _code(self, request: ModelRequest, plan: TaskPlan, turn: Turn, remaining: Sequence[Step]) -> AssistantTurn:
        self._learned = self._learned_shown(request)
        if self._style is Style.PTC_PLUS_BOTH and len(remaining) == 1:
            only = remaining[0]
            offered = only.tool in {s.name for s in request.tools}
            direct = only.each is None and not only.retries and offered and only.id not in self._indirect
            if direct and dependencies(only) <= self._values.keys():
                arguments = self._resolve(only.arguments, None)
                return AssistantTurn(tool_calls=(self._ask(only.tool, arguments, _Pending("", "step", only.id)),))
        missing: dict[str, Step] = {}
        for step in remaining:
            if step.tool not in missing and not self._contract(request, step.tool):
                missing[step.tool] = step
        if missing:
            return self._discover(missing)
        chosen = self._writable(remaining)
        probes = self._probes(plan, turn, chosen)
        if probes:
            code = probe(probes, self._values)
            description = "See one result of " + ", ".join(dict.fromkeys(s.tool for s, _ in probes))
            sent = _Pending("", "probe", steps=tuple(s.id for s, _ in probes))
            return AssistantTurn(tool_calls=(self._ask(RUN_CODE, {"code": code, "description": description}, sent),))
        returns = self._returns(plan, turn, chosen)
        code = program(chosen, self._values, returns)
        description = "; ".join(dict.fromkeys(s.need for s in chosen))
        sent = _Pending("", "program", returns=tuple(returns), steps=tuple(s.id for s in chosen))
        return AssistantTurn(tool_calls=(self._ask(RUN_CODE, {"code": code, "description": description}, sent),))

    def _contract(self, request: ModelRequest, tool: str) -> bool:
        """Whether ``request`` shows ``tool``'s contract: in system text, or in a discovery answer it carries."""
        if contract_shown(request, tool):
            return True
        pattern = re.compile(rf"async def {re.escape(to_identifier(tool))}\(")
        answers = (result_of(request, call_id) for call_id in self._discovery_calls)
        return any(text is not None and pattern.search(text) is not None for text in answers)

    def _discover(self, missing: Mapping[str, Step]) -> AssistantTurn:
        rounds: list[tuple[str, str]] = []
        for tool, step in missing.items():
            done = self._rounds.get(tool, 0)
            if done >= DISCOVERY_ROUNDS:
                raise NeedNotFound(task=self._task_id, step=step.id, tool=tool)
            self._rounds[tool] = done + 1
            rounds.append(
                ("search", step.need) if done == 0 else ("search", name_words(tool)) if done == 1 else ("inspect", tool)
            )
        code = discovery(rounds)
        arguments = {"code": code, "description": "Look up the contracts of " + ", ".join(missing)}
        call = self._ask(RUN_CODE, arguments, _Pending("", "discovery"))
        self._discovery_calls.append(call.call_id)
        return AssistantTurn(tool_calls=(call,))

    def _learned_shown(self, request: ModelRequest) -> frozenset[str]:
        """The functions whose contract, as ``request`` carries it, states a learned result shape (ADR 0109): in
        the system text, a system message (the catalog, an expansion) or a discovery answer it holds. Read from
        the text the model reads, never from the store: a shape no contract of the request shows is unknown."""
        texts = [request.system]
        texts += [str(m.get("content") or "") for m in request.messages if m.get("role") == "system"]
        for call_id in self._discovery_calls:
            answer = result_of(request, call_id)
            if answer is not None:
                texts += _texts_in(answer)
        found: set[str] = set()
        for text in texts:
            found |= learned_functions(text)
        return frozenset(found)

    def _shape_known(self, tool: str) -> bool:
        """A result's fields are known from the tool's output schema, from a learned shape its contract in the
        request states, or from a result of it in the history."""
        return self._schemas.get(tool, False) or tool in self._seen or to_identifier(tool) in self._learned

    def _blind(self, value: Argument, here: Mapping[str, str]) -> bool:
        """Whether ``value`` (arguments, an ``each``, a read) reads a field of a result produced in this program
        (``here``: step id to tool) whose shape the model has not seen: a path, or a derived value's code
        indexing into a source."""
        for ref in references(value):
            if isinstance(ref, Derived):
                fields = bool(indexed_fields(ref.code))
                if any(self._unseen(s, here, fields) for s in ref.sources):
                    return True
            elif self._unseen(ref, here, False):
                return True
        return False

    def _unseen(self, ref: Ref, here: Mapping[str, str], indexed: bool) -> bool:
        return ref.step in here and bool(ref.path or indexed) and not self._shape_known(here[ref.step])

    def _writable(self, remaining: Sequence[Step]) -> list[Step]:
        """The steps a program can run now: dependencies met here or earlier, no field of an unseen shape."""
        chosen: list[Step] = []
        here: dict[str, str] = {}
        for step in remaining:
            if not dependencies(step) <= self._values.keys() | here.keys():
                continue
            each = step.each if isinstance(step.each, Ref) else None
            blind = self._blind([dict(step.arguments), *([each] if each is not None else [])], here)
            if each is not None and not isinstance(each, Derived) and each.step in here:
                # Items of a plain list whose shape is unseen: their fields cannot be written yet.
                unseen = not self._shape_known(here[each.step])
                blind = blind or (unseen and any(item.path for item in _items_of(step.arguments)))
            if not blind:
                chosen.append(step)
                here[step.id] = step.tool
        return chosen

    def _probes(self, plan: TaskPlan, turn: Turn, chosen: Sequence[Step]) -> list[tuple[Step, JSONValue]]:
        """The fan-outs of this program whose results a derived value would index blind (a read of the turn,
        an argument of a later step): each probed with its first item first. Only a fan-out whose items are
        known now (a literal list, or read earlier)."""
        ran = {s.id for s in chosen}
        later = [s for s in steps_of(plan) if s.id not in ran and s.id not in self._values]
        needing = [d for s in later for d in derived_values([dict(s.arguments), s.each])]
        needing += list(derived_values(list(turn.reads)))
        found: list[tuple[Step, JSONValue]] = []
        for step in chosen:
            if step.each is None or self._shape_known(step.tool) or not dependencies(step) <= self._values.keys():
                continue
            here = {step.id: step.tool}
            if not any(self._unseen(s, here, bool(indexed_fields(d.code))) for d in needing for s in d.sources):
                continue
            items = self._items(step)
            if items and step.tool not in {s.tool for s, _ in found}:
                found.append((step, items[0]))
        return found

    def _returns(self, plan: TaskPlan, turn: Turn, chosen: Sequence[Step]) -> list[Returned]:
        """What the program returns: whole results a step it does not run needs, then the turn's reads."""
        ran = {s.id for s in chosen}
        tools = {s.id: s.tool for s in chosen}
        later = [s for s in steps_of(plan) if s.id not in ran and s.id not in self._values]
        wanted: dict[Returned, None] = {}
        for step in later:
            for dep in sorted(dependencies(step) & ran):
                wanted[Returned(dep)] = None
        for ref in turn.reads:
            if isinstance(ref, Derived):
                inside = [s for s in ref.sources if s.step in ran]
                if not inside:
                    continue  # worked out from results read earlier, when the answer is written
                if self._blind([ref], tools):
                    for source in inside:  # the raw results: the model reads them and works the value out
                        wanted[Returned(source.step)] = None
                else:
                    wanted[Returned(ref.step, ref.path, derived=ref)] = None
                continue
            if ref.step not in ran:
                continue
            known = not ref.path or self._shape_known(tools[ref.step])
            wanted[Returned(ref.step, ref.path if known else ())] = None
        return list(wanted)

    # -- asking ---------------------------------------------------------------------------------------

    def _ask(self, tool: str, arguments: dict[str, Any], sent: _Pending) -> RequestedCall:
        self._calls += 1
        call_id = f"{self._prefix}-{self._calls}"
        self._pending.append(attrs.evolve(sent, call_id=call_id))
        return RequestedCall(tool=tool, arguments=arguments, call_id=call_id)


def _previewed(content: str) -> bool:
    """Whether a program's tool result is a preview standing in for a large result (not JSON at all)."""
    try:
        orjson.loads(content)
    except orjson.JSONDecodeError:
        return True
    return False


def _texts_in(content: str) -> list[str]:
    """The texts of a discovery answer: ``run_code``'s envelope is JSON, and the contracts are strings inside it
    (their line breaks escaped in the raw content, so a stub's start of line is only found once decoded)."""
    try:
        parsed = orjson.loads(content)
    except orjson.JSONDecodeError:
        return [content]
    found: list[str] = []

    def walk(value: object) -> None:
        if isinstance(value, str):
            found.append(value)
        elif isinstance(value, dict):
            for inner in value.values():
                walk(inner)
        elif isinstance(value, list):
            for inner in value:
                walk(inner)

    walk(parsed)
    return found


def _items_of(arguments: Mapping[str, Argument]) -> list[Item]:
    found: list[Item] = []

    def walk(value: Argument) -> None:
        if isinstance(value, Item):
            found.append(value)
        elif isinstance(value, Mapping):
            for inner in value.values():
                walk(inner)
        elif isinstance(value, (list, tuple)):
            for inner in value:
                walk(inner)

    walk(dict(arguments))
    return found


__all__ = ["DEFAULT_CONTEXT_TOKENS", "PlanDriver"]
