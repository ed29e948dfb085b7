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

A value the model *works out* between calls (the customer ids in the rows of
a CSV, an order's total weight, the aggregate an answer states) is a
:class:`Derived`: a :class:`Ref` that also names further sources and carries
the computation twice, as ``fn`` (what a native model does in its head) and
as ``code``, that function's own source, which a code style's program
contains and calls.

Order is explicit. A step runs after every step it names in ``after`` and
every step one of its references reads (a derived value's ``also`` too).
Steps with no such relation are independent: a native model sends them in
one response, a program gathers them.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from collections.abc import Callable, Iterator, Mapping
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


@attrs.frozen(kw_only=True)
class Derived(Ref):
    """A value computed from earlier results: ``fn(*sources)``, the sources being ``step``/``path`` then ``also``.

    :ivar also: further sources after ``step``/``path`` (plain references).
    :ivar fn: the computation, for whoever resolves the value directly (a native model works it out).
    :ivar code: ``fn``'s source, a self-contained ``def`` (it imports what it uses, annotations dropped): a
        program contains it and calls :attr:`name`. The result fields it indexes (:func:`indexed_fields`) are
        fields of its sources a program may read only once their shape is known.
    """

    also: tuple[Ref, ...] = ()
    fn: Callable[..., JSONValue] = attrs.field(eq=False)
    code: str = attrs.field(eq=False)

    @property
    def sources(self) -> tuple[Ref, ...]:
        """Every value the computation reads, in the order ``fn`` takes them (plain references)."""
        return (Ref(self.step, self.path), *self.also)

    @property
    def name(self) -> str:
        """The name ``code`` defines."""
        return str(getattr(self.fn, "__name__", ""))


def derive(sources: Ref | tuple[Ref, ...], fn: Callable[..., JSONValue]) -> Derived:
    """A :class:`Derived` over ``sources`` (one reference or several) computed by ``fn``, a module-level
    ``def`` that imports what it uses (its source is what a program carries)."""
    first, *rest = (sources,) if isinstance(sources, Ref) else sources
    if isinstance(first, Derived) or any(isinstance(r, Derived) for r in rest):
        raise ValueError("a derived value's sources are plain references")
    return Derived(step=first.step, path=first.path, also=tuple(rest), fn=fn, code=program_text(fn))


class _Unannotated(ast.NodeTransformer):
    def visit_arg(self, node: ast.arg) -> ast.arg:
        node.annotation = None
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.FunctionDef:
        node.returns = None
        self.generic_visit(node)
        return node

    def visit_AnnAssign(self, node: ast.AnnAssign) -> ast.stmt:
        if node.value is None:
            return ast.Pass()
        return ast.Assign(targets=[node.target], value=node.value, lineno=node.lineno)


def program_text(fn: Callable[..., JSONValue]) -> str:
    """``fn``'s source as a program carries it: annotations dropped (they name the suite's types, which a
    program has not imported), the rest as written."""
    tree = _Unannotated().visit(ast.parse(textwrap.dedent(inspect.getsource(fn))))
    return ast.unparse(ast.fix_missing_locations(tree))


def indexed_fields(code: str) -> frozenset[str]:
    """The result fields ``code`` reads by name: constant string subscripts (``order["status"]``) and
    ``.get("name")`` calls. Non-empty means the code needs the shape of what it is given."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Subscript):
            key = node.slice
            if isinstance(key, ast.Constant) and isinstance(key.value, str):
                found.add(key.value)
        elif _get_call(node):
            found.add(str(node.args[0].value))  # type: ignore[attr-defined]
    return frozenset(found)


def _get_call(node: ast.AST) -> bool:
    """``x.get("name")``: a call of ``get`` whose first argument is a constant string."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"):
        return False
    return bool(node.args) and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)


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


def references(value: Argument) -> Iterator[Ref]:
    """Every reference in an argument: a :class:`Ref`, a :class:`Derived` then its ``also`` sources."""
    if isinstance(value, Derived):
        yield value
        yield from value.also
    elif isinstance(value, Ref):
        yield value
    elif isinstance(value, Mapping):
        for inner in value.values():
            yield from references(inner)
    elif isinstance(value, (list, tuple)):
        for inner in value:
            yield from references(inner)


def derived_values(value: Argument) -> Iterator[Derived]:
    """Every :class:`Derived` in an argument (or a step's ``each``, or a turn's ``reads``)."""
    return (ref for ref in references(value) if isinstance(ref, Derived))


def dependencies(step: Step) -> frozenset[str]:
    """Every step ``step`` must wait for: ``after`` and every step one of its references reads (``each``
    and every source of a derived value included)."""
    each = [step.each] if isinstance(step.each, Ref) else []
    return frozenset(step.after) | {ref.step for ref in references([dict(step.arguments), *each])}


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
