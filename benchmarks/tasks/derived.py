"""EXTENSION of ``ptc_plus.evaluation.task_plan`` (proposed, not yet in the committed types): derived values.

The committed plan types take an argument from an earlier result only as
``Ref(step, path)``: a field as the tool returned it. Eight of the 22 plans
need a value the model *works out* from results before the next call: the
customer ids in the rows of a CSV (t03), the latest other order of a list
(t05), the product id in a child's answer (t07), the report's text (t11), the
action items of the minutes (t12), an order's total weight (t13), a sum of
pounds (t16), a note's body (w05); and most answers read an aggregate, not
raw results (t02 reads two numbers, not 200 orders).

:class:`Derived` is a :class:`Ref` (so ``Step.each``, ``Turn.reads`` and
``task_plan.dependencies`` accept it as the types stand) that also carries the
computation: ``fn`` for whoever executes a plan directly (a native model does
this in its head, then writes the next call), and ``code``, that function's
own source (a self-contained ``def``: it imports what it uses), which a code
style's program contains and calls (its tokens are part of the bill, and
``ast`` shows the result fields it indexes, which a policy must check are
known). Its sources are the value at ``step``/``path`` then each of ``also``,
in order.

Until the policy owns this type, :func:`step_dependencies` is the dependency
rule that also counts ``also`` (``task_plan.dependencies`` sees only ``step``).
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import attrs

from hookspecs.types import JSONValue
from ptc_plus.evaluation.task_plan import Argument, Ref, Step, dependencies


@attrs.frozen(kw_only=True)
class Derived(Ref):
    """A value computed from earlier results (EXTENSION, see the module's docstring).

    :ivar also: further sources after ``step``/``path``.
    :ivar fn: the computation: ``fn(*sources)``.
    :ivar code: ``fn``'s source, a ``def`` a program contains and calls (:attr:`name`).
    """

    also: tuple[Ref, ...] = ()
    fn: Callable[..., JSONValue] = attrs.field(eq=False)
    code: str

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


def references(value: Argument) -> Iterator[Ref]:
    """Every :class:`Ref` in an argument (a :class:`Derived` and its sources)."""
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


def step_dependencies(step: Step) -> frozenset[str]:
    """``task_plan.dependencies`` plus the steps the ``also`` sources of derived values read."""
    extra: list[Any] = [dict(step.arguments)] + ([step.each] if step.each is not None else [])
    return dependencies(step) | {ref.step for ref in references(extra)}


__all__ = ["Derived", "derive", "program_text", "references", "step_dependencies"]
