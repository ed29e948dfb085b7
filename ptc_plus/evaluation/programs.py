"""The programs a code-mode policy writes from a task plan (ADR 0094).

A program runs the plan's steps that can run now, in dependency levels:
independent steps of one level are gathered with ``asyncio.gather``, a
fan-out is a gathered comprehension, a step with retries is wrapped in a
retry loop (what a model that read the tool's error would write). Values the
model read in an earlier result are pasted in as literals (programs share no
state); values of steps of this program are its variables. A program returns
a dict of exactly what the policy still needs: whole results a later step or
a probe needs, and the turn's reads (indexed when their shape is known).
"""

from __future__ import annotations

import keyword
import re
from collections.abc import Mapping, Sequence

import attrs

from hookspecs.types import JSONValue
from ptc_plus.evaluation.task_plan import Argument, Item, PathKey, Ref, Step, dependencies
from ptc_plus.sdk import to_identifier

RETRY = """async def retry(call, times):
    for attempt in range(times):
        try:
            return await call()
        except Exception:
            if attempt == times - 1:
                raise"""
"""The retry loop a program defines when one of its steps has retries."""


@attrs.frozen
class Returned:
    """One entry of a program's returned dict: ``step``'s result, then ``path`` into it."""

    step: str
    path: tuple[PathKey, ...] = ()

    @property
    def key(self) -> str:
        return "_".join([self.step, *(str(k) for k in self.path)])


def variable(step: str) -> str:
    """The program variable holding ``step``'s result."""
    return "v_" + re.sub(r"\W", "_", step)


def indexed(expression: str, path: Sequence[PathKey]) -> str:
    return expression + "".join(f"[{key!r}]" for key in path)


def lookup(value: JSONValue, path: Sequence[PathKey]) -> JSONValue:
    """``value`` then ``path`` into it (a key of a dict, an index of a list)."""
    for key in path:
        if isinstance(key, int) and isinstance(value, list):
            value = value[key]
            continue
        if isinstance(key, str) and isinstance(value, dict):
            value = value[key]
            continue
        raise KeyError(key)
    return value


def argument(value: Argument, known: Mapping[str, JSONValue]) -> str:
    """``value`` as Python source: a known result as a literal, a result of this program as its variable."""
    if isinstance(value, Ref):
        if value.step in known:
            return repr(lookup(known[value.step], value.path))
        return indexed(variable(value.step), value.path)
    if isinstance(value, Item):
        return indexed("item", value.path)
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{k!r}: {argument(v, known)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(argument(v, known) for v in value) + "]"
    return repr(value)


def _keyword(name: str) -> bool:
    return name.isidentifier() and not keyword.iskeyword(name)


def call(step: Step, known: Mapping[str, JSONValue]) -> str:
    """The awaitable of one call of ``step`` (inside a fan-out, ``item`` is the current item)."""
    plain = {k: v for k, v in step.arguments.items() if _keyword(k)}
    odd = {k: v for k, v in step.arguments.items() if not _keyword(k)}
    parts = [f"{k}={argument(v, known)}" for k, v in plain.items()]
    if odd:
        parts.append("**" + argument(odd, known))
    expression = f"tools.{to_identifier(step.tool)}({', '.join(parts)})"
    if step.retries:
        bound = " item=item" if step.each is not None else ""
        return f"retry(lambda{bound}: {expression}, {step.retries + 1})"
    return expression


def awaitable(step: Step, known: Mapping[str, JSONValue]) -> str:
    """What the program awaits for ``step``: its call, or for a fan-out every item's call gathered."""
    if step.each is None:
        return call(step, known)
    source = argument(step.each, known) if isinstance(step.each, Ref) else repr(list(step.each))
    return f"asyncio.gather(*({call(step, known)} for item in {source}))"


def levels(steps: Sequence[Step]) -> list[list[Step]]:
    """``steps`` in dependency levels: a step's level is one past the highest of its dependencies here."""
    ids = {s.id for s in steps}
    level: dict[str, int] = {}
    for step in steps:  # a plan lists dependencies first
        inner = [level[d] for d in dependencies(step) if d in ids]
        level[step.id] = 1 + max(inner) if inner else 0
    grouped: list[list[Step]] = [[] for _ in range(1 + max(level.values(), default=-1))]
    for step in steps:
        grouped[level[step.id]].append(step)
    return grouped


def program(steps: Sequence[Step], known: Mapping[str, JSONValue], returns: Sequence[Returned]) -> str:
    """The source of a program running ``steps`` (in an order with dependencies first) and returning
    ``returns`` as a dict keyed by :attr:`Returned.key`."""
    grouped = levels(steps)
    lines: list[str] = []
    if any(s.each is not None for s in steps) or any(len(group) > 1 for group in grouped):
        lines.append("import asyncio")
    if any(s.retries for s in steps):
        lines.append(RETRY)
    for group in grouped:
        if len(group) == 1:
            lines.append(f"{variable(group[0].id)} = await {awaitable(group[0], known)}")
        else:
            targets = ", ".join(variable(s.id) for s in group)
            gathered = ", ".join(awaitable(s, known) for s in group)
            lines.append(f"{targets} = await asyncio.gather({gathered})")
    entries = ", ".join(f"{r.key!r}: {indexed(variable(r.step), r.path)}" for r in returns)
    lines.append(f"return {{{entries}}}")
    return "\n".join(lines)


def discovery(rounds: Sequence[tuple[str, str]]) -> str:
    """A discovery program: per missing tool one ``(method, argument)``, ``search`` with words or
    ``inspect`` with a name, all in one program (one round trip)."""
    calls = [
        f"await capabilities.search({arg!r})" if method == "search" else f"await capabilities.inspect([{arg!r}])"
        for method, arg in rounds
    ]
    if len(calls) == 1:
        return f"return {calls[0]}"
    return "return [" + ", ".join(calls) + "]"


def name_words(tool: str) -> str:
    """A tool's name split into words (``tax_rate`` → ``tax rate``): a model's second search."""
    return " ".join(w for w in re.split(r"[^0-9A-Za-z]+|(?<=[a-z])(?=[A-Z])", tool) if w).lower()
