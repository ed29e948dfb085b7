"""A task written once as a plan, which every style's policy turns into what its model would send.

A *task plan* says what the user needs, not how any style asks for it: turns
(each a user message), each with steps. A step is one need in the user's own
words, the tool that meets it, its arguments (literals, or values taken from
earlier results with :class:`Ref`), and which earlier steps must finish
first. The policy of a style (native, native + tool search, PTC, PTC + tool
search, PTC Plus) decides from the plan *and from what its requests carry*
what the model sends: a batch of parallel calls, a search, a program. So the
same plan costs each style what that style's model would spend, and no style
knows a contract or a result shape its requests never showed it.

Order is explicit. A step runs after every step it names in ``after`` and
every step one of its :class:`Ref` arguments reads. Steps with no such
relation are independent: a native model sends them in one response, a
program gathers them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import attrs

from hookspecs.types import JSONValue

PathKey = str | int
"""A key into a JSON value: a field name or a list index."""


@attrs.frozen
class Ref:
    """A value taken from the result of an earlier step: ``step``'s result, then ``path`` into it.

    An empty path is the whole result. A non-empty path into the result of a tool
    without an output schema is knowable only once a result of that tool is in the
    history (the policy probes first).
    """

    step: str
    path: tuple[PathKey, ...] = ()


@attrs.frozen
class Item:
    """Inside the arguments of a fan-out step (:attr:`Step.each`): the current item, then ``path`` into it."""

    path: tuple[PathKey, ...] = ()


Argument = Any
"""A JSON literal, a :class:`Ref`, an :class:`Item`, or a list / dict holding them."""


@attrs.frozen(kw_only=True)
class Step:
    """One need of a turn and the tool call that meets it.

    :ivar id: unique within the plan; :class:`Ref` names it.
    :ivar need: what the user needs from this step, in the user's words: what a model searches with
        when the tool's contract is not in its request.
    :ivar tool: the tool that meets the need (its name on the host).
    :ivar arguments: the call's arguments: literals, :class:`Ref`, :class:`Item`.
    :ivar after: steps that must finish first although no argument reads them (side effects: write, then
        read).
    :ivar each: a fan-out: one call per item of the list this reference names, or of a literal list the
        user gave (:class:`Item` in the arguments is that item); the step's result is the list of the calls'
        results, in order.
    :ivar retries: how many times a model retries the call after an error result (a flaky service).
    :ivar child: for a step whose tool starts a child agent (``agent``): the plan the child session follows.
        Its first turn's prompt is the ``prompt`` argument, so a child's driver finds its plan from the
        user message it receives.
    """

    id: str
    need: str
    tool: str
    arguments: Mapping[str, Argument] = attrs.field(factory=dict)
    after: tuple[str, ...] = ()
    each: Ref | tuple[JSONValue, ...] | None = None
    retries: int = 0
    child: TaskPlan | None = None


@attrs.frozen(kw_only=True)
class Turn:
    """One user message and the steps that answer it.

    :ivar prompt: the user's message.
    :ivar steps: in an order where each step's dependencies come before it.
    :ivar reads: what the final answer is written from: a program returns these values; a native model
        reads them in its history.
    :ivar answer: the final answer's text from the values of :attr:`reads`, in order.
    """

    prompt: str
    steps: tuple[Step, ...]
    reads: tuple[Ref, ...]
    answer: Callable[[tuple[JSONValue, ...]], str]


@attrs.frozen(kw_only=True)
class TaskPlan:
    """A whole task: its turns, in order (most tasks have one)."""

    turns: tuple[Turn, ...]


def dependencies(step: Step) -> frozenset[str]:
    """Every step ``step`` must wait for: ``after`` and every step one of its references reads."""
    found: set[str] = set(step.after)
    if isinstance(step.each, Ref):
        found.add(step.each.step)

    def walk(value: Argument) -> None:
        if isinstance(value, Ref):
            found.add(value.step)
        elif isinstance(value, Mapping):
            for inner in value.values():
                walk(inner)
        elif isinstance(value, (list, tuple)):
            for inner in value:
                walk(inner)

    walk(dict(step.arguments))
    return frozenset(found)


def steps_of(plan: TaskPlan) -> tuple[Step, ...]:
    """Every step of ``plan``, its turns in order."""
    return tuple(step for turn in plan.turns for step in turn.steps)


def child_plans(plan: TaskPlan) -> dict[str, TaskPlan]:
    """Per first prompt, every child plan ``plan`` starts (children of children too)."""
    found: dict[str, TaskPlan] = {}
    for step in steps_of(plan):
        if step.child is not None and step.child.turns:
            found.setdefault(step.child.turns[0].prompt, step.child)
            found.update({k: v for k, v in child_plans(step.child).items() if k not in found})
    return found
