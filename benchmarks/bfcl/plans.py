"""A BFCL task's ground truth as a task plan: one :class:`Turn` per user turn, one :class:`Step` per call.

The ground truth is executed directly (fresh backends, the calls in BFCL's
order) to learn every call's result and whether it changed its backend's
state; the plan is written from that (ADR 0095):

- **Data dependency.** A literal argument value (a leaf of the arguments)
  that the user's messages so far do not contain, but that equals a leaf of
  an earlier call's result *in the same turn*, becomes a :class:`Ref` to
  that result (the latest such call, at that leaf's path): a model learns it
  only from the result. A string value that is only *part* of such a result
  leaf stays a literal but the step waits for that call (``after``).
- **Order of state.** Per backend instance, a call that changed the state
  waits for the backend's previous state-changing call and every call made
  since; any other call waits for the previous state-changing call. So
  writes keep their order, reads never overtake the write before them nor
  are overtaken by the write after them, and reads between two writes are
  independent. Backends of different classes are independent.
- Every step's ``need`` is the turn's user message; the turn ``reads`` its
  last call's result, and its ``answer`` states that result's leaves
  (:class:`LeafAnswer`). A turn without ground-truth calls (BFCL's "nothing
  here can do it") has no steps and answers :data:`NO_TOOL_ANSWER`.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import attrs

from hookspecs.services import ToolFailure
from hookspecs.types import JSONObject, JSONValue
from ptc_plus.evaluation.task_plan import PathKey, Ref, Step, TaskPlan, Turn

from .backends import fingerprint, fresh_instances
from .ground_truth import parse_call
from .wheel import Wheel
from .world import invoke, method_owners

NO_TOOL_ANSWER = "None of the available tools can do that."


@attrs.frozen(kw_only=True)
class GroundTruthCall:
    """One executed ground-truth call: its tool, bound arguments, result, and whether it changed its backend."""

    turn: int
    index: int
    tool: str
    owner: str
    arguments: JSONObject
    ok: bool
    result: JSONValue
    """The JSON result; for a call whose method raised, BFCL's error text."""
    changed: bool

    @property
    def step_id(self) -> str:
        return f"t{self.turn}c{self.index}"


def turn_texts(entry: Mapping[str, Any]) -> list[str]:
    """Each turn's user message(s), joined (BFCL turns hold one user message each in this category)."""
    return ["\n".join(str(m["content"]) for m in turn if m.get("role") == "user") for turn in entry["question"]]


def execute_ground_truth(
    wheel: Wheel, entry: Mapping[str, Any], ground_truth: Sequence[Sequence[str]]
) -> tuple[dict[str, Any], list[list[GroundTruthCall]]]:
    """Run the ground truth on fresh backends as BFCL does: the instances after it, and every call per turn."""
    classes = list(entry["involved_classes"])
    instances = fresh_instances(wheel, classes, entry["initial_config"])
    owners = method_owners(wheel, classes)
    turns: list[list[GroundTruthCall]] = []
    for number, calls in enumerate(ground_truth):
        done: list[GroundTruthCall] = []
        for index, text in enumerate(calls):
            parsed = parse_call(text)
            if parsed.name not in owners:
                raise ValueError(f"{entry['id']}: {parsed.name} is no function of {classes}")
            owner = owners[parsed.name]
            arguments = parsed.bind(getattr(instances[owner], parsed.name))
            before = fingerprint(instances[owner])
            try:
                result, ok = invoke(instances, owners, parsed.name, copy.deepcopy(arguments)), True
            except ToolFailure as failure:
                result, ok = failure.message, False
            changed = fingerprint(instances[owner]) != before
            done.append(
                GroundTruthCall(
                    turn=number,
                    index=index,
                    tool=parsed.name,
                    owner=owner,
                    arguments=arguments,
                    ok=ok,
                    result=result,
                    changed=changed,
                )
            )
        turns.append(done)
    return instances, turns


def leaves(value: JSONValue, path: tuple[PathKey, ...] = ()) -> Iterator[tuple[tuple[PathKey, ...], JSONValue]]:
    """Every scalar of ``value`` with its path (dict keys, list indices)."""
    if isinstance(value, dict):
        for key, inner in value.items():
            yield from leaves(inner, (*path, key))
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            yield from leaves(inner, (*path, index))
    else:
        yield path, value


def leaf_text(value: JSONValue) -> str:
    return value if isinstance(value, str) else "true" if value is True else "false" if value is False else repr(value)


def required_texts(result: JSONValue) -> list[str]:
    """What an answer must state of ``result``: its non-empty string and number leaves (not flags, not nulls)."""
    return [leaf_text(v) for _, v in leaves(result) if (isinstance(v, str) and v.strip()) or _is_number(v)]


_NUMBER = re.compile(r"(?<![\w.])-?\d[\d,]*(?:\.\d+)?(?:[eE][-+]?\d+)?")


def missing_from(answer: str, result: JSONValue) -> list[str]:
    """The :func:`required_texts` of ``result`` that ``answer`` does not state.

    Strings must appear verbatim; a number may be written in any form of the same value (``2400``,
    ``2,400.0``), as a model writes it.
    """
    stated = [float(m.group().replace(",", "")) for m in _NUMBER.finditer(answer)]
    missing = []
    for _, leaf in leaves(result):
        if isinstance(leaf, str):
            if leaf.strip() and leaf not in answer:
                missing.append(leaf)
        elif _is_number(leaf):
            assert isinstance(leaf, (int, float))
            if not any(abs(found - leaf) <= 1e-9 * max(1.0, abs(leaf)) for found in stated):
                missing.append(leaf_text(leaf))
    return missing


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _known(value: JSONValue, said: str) -> bool:
    if isinstance(value, str):
        return value in said
    if _is_number(value):
        forms = {repr(value), str(value)}
        if isinstance(value, float) and value.is_integer():
            forms.add(str(int(value)))
        return any(form in said for form in forms)
    return True  # flags and nulls carry no information a result could supply


@attrs.frozen
class LeafAnswer:
    """The answer of a turn: every leaf of the result it reads, one per line (``path: value``)."""

    def __call__(self, values: tuple[JSONValue, ...]) -> str:
        lines = [
            f"{'.'.join(str(k) for k in path) or 'result'}: {leaf_text(v)}"
            for value in values
            for path, v in leaves(value)
        ]
        return "\n".join(lines) if lines else "Done."


@attrs.frozen
class FixedAnswer:
    text: str

    def __call__(self, values: tuple[JSONValue, ...]) -> str:
        return self.text


def _arguments(value: JSONValue, said: str, earlier: Sequence[GroundTruthCall], waits: set[str]) -> Any:
    """``value`` with each leaf a result supplied replaced by a :class:`Ref` (or noted in ``waits``)."""
    if isinstance(value, dict):
        return {k: _arguments(v, said, earlier, waits) for k, v in value.items()}
    if isinstance(value, list):
        return [_arguments(v, said, earlier, waits) for v in value]
    if _known(value, said):
        return value
    for call in reversed(earlier):
        if not call.ok:
            continue
        for path, leaf in leaves(call.result):
            if type(leaf) is type(value) and leaf == value:
                return Ref(call.step_id, path)
    if isinstance(value, str):
        for call in reversed(earlier):
            if call.ok and any(isinstance(leaf, str) and value in leaf for _, leaf in leaves(call.result)):
                waits.add(call.step_id)
                break
    return value


def _references(value: Any) -> set[str]:
    if isinstance(value, Ref):
        return {value.step}
    if isinstance(value, dict):
        return set().union(*(_references(v) for v in value.values())) if value else set()
    if isinstance(value, list):
        return set().union(*(_references(v) for v in value)) if value else set()
    return set()


def build_plan(entry: Mapping[str, Any], turns: Sequence[Sequence[GroundTruthCall]]) -> TaskPlan:
    """The plan of a task from its executed ground truth (the module docstring's rules)."""
    texts = turn_texts(entry)
    planned: list[Turn] = []
    for number, calls in enumerate(turns):
        said = "\n".join(texts[: number + 1])
        steps: list[Step] = []
        last_write: dict[str, str] = {}
        since_write: dict[str, list[str]] = {}
        for position, call in enumerate(calls):
            waits: set[str] = set()
            arguments = _arguments(call.arguments, said, calls[:position], waits)
            order: set[str] = set()
            if call.owner in last_write:
                order.add(last_write[call.owner])
            if call.changed:
                order.update(since_write.get(call.owner, []))
                last_write[call.owner] = call.step_id
                since_write[call.owner] = []
            else:
                since_write.setdefault(call.owner, []).append(call.step_id)
            after = tuple(sorted((order | waits) - _references(arguments)))
            steps.append(Step(id=call.step_id, need=texts[number], tool=call.tool, arguments=arguments, after=after))
        answer: Callable[[tuple[JSONValue, ...]], str] = LeafAnswer() if steps else FixedAnswer(NO_TOOL_ANSWER)
        reads = (Ref(steps[-1].id),) if steps else ()
        planned.append(Turn(prompt=texts[number], steps=tuple(steps), reads=reads, answer=answer))
    return TaskPlan(turns=tuple(planned))
