"""The programs a code-mode policy writes from a task plan (ADR 0094).

A program runs the plan's steps that can run now, in dependency levels:
independent steps of one level are gathered with ``asyncio.gather``, a
fan-out is a gathered comprehension, a step with retries is wrapped in a
retry loop (what a model that read the tool's error would write). Values the
model read in an earlier result are pasted in as literals (programs share no
state); values of steps of this program are its variables. A derived value
(:class:`~.task_plan.Derived`) over results of this program is its function
(``code``, defined at the top of the program) called on them; over results
read earlier, the value the model worked out, pasted. A program returns a
dict of exactly what the policy still needs: whole results a later step or a
probe needs, and the turn's reads (indexed when their shape is known, a
derived read computed in the program).
"""

from __future__ import annotations

import keyword
import re
from collections.abc import Mapping, Sequence

import attrs

from hookspecs.types import JSONValue
from ptc_plus.evaluation.task_plan import Argument, Derived, Item, PathKey, Ref, Step, dependencies, derived_values
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
    """One entry of a program's returned dict: ``step``'s result, then ``path`` into it; or, with ``derived``,
    that value computed in the program (``step`` and ``path`` are then its first source's)."""

    step: str
    path: tuple[PathKey, ...] = ()
    derived: Derived | None = None

    @property
    def key(self) -> str:
        if self.derived is not None:
            return f"{self.derived.name.strip('_')}_{self.step}"
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
    """``value`` as Python source: a known result as a literal, a result of this program as its variable, a
    derived value as its function called on its sources (pasted when every source is known: worked out)."""
    if isinstance(value, Derived):
        if all(source.step in known for source in value.sources):
            return repr(value.fn(*(lookup(known[s.step], s.path) for s in value.sources)))
        return f"{value.name}({', '.join(argument(source, known) for source in value.sources)})"
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
    lines += functions(steps, known, returns)
    for group in grouped:
        if len(group) == 1:
            lines.append(f"{variable(group[0].id)} = await {awaitable(group[0], known)}")
        else:
            targets = ", ".join(variable(s.id) for s in group)
            gathered = ", ".join(awaitable(s, known) for s in group)
            lines.append(f"{targets} = await asyncio.gather({gathered})")
    entries = ", ".join(f"{r.key!r}: {returned(r, known)}" for r in returns)
    lines.append(f"return {{{entries}}}")
    return "\n".join(lines)


def returned(entry: Returned, known: Mapping[str, JSONValue]) -> str:
    """The expression of one returned entry."""
    if entry.derived is not None:
        return argument(entry.derived, known)
    return indexed(variable(entry.step), entry.path)


def functions(steps: Sequence[Step], known: Mapping[str, JSONValue], returns: Sequence[Returned]) -> list[str]:
    """The ``def`` of every derived value the program computes (one per name; none for a pasted one)."""
    found = [d for s in steps for d in derived_values([dict(s.arguments), s.each])]
    found += [r.derived for r in returns if r.derived is not None]
    written = {d.name: d.code for d in found if not all(source.step in known for source in d.sources)}
    return list(written.values())


def probe(steps: Sequence[tuple[Step, JSONValue]], known: Mapping[str, JSONValue]) -> str:
    """A probing program: one call of each ``(step, item)`` (a fan-out's first item), returned raw, so the
    model sees the shape of a result before it writes code that indexes into it."""
    lines: list[str] = []
    if len(steps) > 1:
        lines.append("import asyncio")
    if any(step.retries for step, _ in steps):
        lines.append(RETRY)
    if len(steps) == 1:
        step, item = steps[0]
        lines += [f"item = {item!r}", f"return await {call(step, known)}"]
    else:
        calls = ", ".join(f"(lambda item: {call(step, known)})({item!r})" for step, item in steps)
        lines.append(f"return await asyncio.gather({calls})")
    return "\n".join(lines)


def discovery(rounds: Sequence[tuple[str, str]]) -> str:
    """A discovery program: per missing tool one ``(method, argument)``, ``search`` with words or
    ``inspect`` with a name, all in one program (one round trip).

    It returns what it found by name and the answers' ``candidates``, not the contracts: the session delivers
    the contracts an answer expanded to the model once, as a message (ADR 0070), and the bootstrap says so, so
    a model that returned them would pay for each twice (ADR 0107). A contract that message could not carry
    is not shown, and the policy looks again (another round), as a model would.
    """
    calls = [
        f"await capabilities.search({arg!r})" if method == "search" else f"await capabilities.inspect([{arg!r}])"
        for method, arg in rounds
    ]
    brief = "{'found': [c['name'] for c in a['expanded']], 'candidates': a.get('candidates', [])}"
    if len(calls) == 1:
        return f"a = {calls[0]}\nreturn {brief}"
    return "answers = [" + ", ".join(calls) + f"]\nreturn [{brief} for a in answers]"


def name_words(tool: str) -> str:
    """A tool's name split into words (``tax_rate`` → ``tax rate``): a model's second search."""
    return " ".join(w for w in re.split(r"[^0-9A-Za-z]+|(?<=[a-z])(?=[A-Z])", tool) if w).lower()
