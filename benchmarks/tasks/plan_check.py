"""Executing a task plan directly: every step against a tool-calling function, no model, no style.

This is how the tests prove a plan right independent of any policy: the
answer its ``answer`` functions write from what the real tools returned must
pass the task's oracle. Semantics every policy must keep:

- a step runs once every step it depends on finished (``after``, references,
  ``each``, the sources of derived values; ``task_plan.dependencies``); steps ready together run
  concurrently (as a native model's parallel calls or a program's gather);
- a fan-out calls once per item of its list, concurrently; its result is the
  list of results in order;
- a failed call is retried up to ``retries`` times, then the plan fails;
- the ``agent`` tool, when its step names a child plan (``Step.child``, else
  the executor's ``child``), runs that plan as a child
  session (its calls carry a child's :class:`AgentRef`) and returns
  ``{"answer": text}``, as the evaluation's agent tool does;
- results stay known across turns; the answer is the last turn's.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from hookspecs.services import ToolFailure
from hookspecs.types import AgentRef, JSONObject, JSONValue
from ptc_plus.evaluation.task_plan import Argument, Derived, Item, PathKey, Ref, Step, TaskPlan, dependencies

ToolCaller = Callable[[str, JSONObject, AgentRef], Awaitable[JSONValue]]
"""``(tool, arguments, caller) -> result``; raises :class:`ToolFailure` for an error result."""

AGENT_TOOL = "agent"


class PlanFailed(Exception):
    """The plan cannot be executed as written (a cycle, a bad reference, a call that kept failing)."""


def value_at(value: Any, path: tuple[PathKey, ...]) -> Any:
    """``value`` indexed by each key of ``path`` in turn."""
    for key in path:
        try:
            value = value[key]
        except (KeyError, IndexError, TypeError) as error:
            raise PlanFailed(f"no {key!r} in {str(value)[:120]}") from error
    return value


def resolve(argument: Argument, results: Mapping[str, Any], item: Any = None) -> Any:
    """An argument's value: references read ``results``, :class:`Item` reads ``item``, the rest is literal."""
    if isinstance(argument, Derived):
        return argument.fn(*(resolve(source, results) for source in argument.sources))
    if isinstance(argument, Ref):
        if argument.step not in results:
            raise PlanFailed(f"{argument.step!r} has not run")
        return value_at(results[argument.step], argument.path)
    if isinstance(argument, Item):
        return value_at(item, argument.path)
    if isinstance(argument, Mapping):
        return {key: resolve(inner, results, item) for key, inner in argument.items()}
    if isinstance(argument, (list, tuple)):
        return [resolve(inner, results, item) for inner in argument]
    return argument


def child_of(caller: AgentRef, number: int) -> AgentRef:
    """The ref of the ``number``-th child session ``caller`` starts (same family, ``caller`` its parent)."""
    return AgentRef(
        session_id=f"{caller.session_id}.child{number}",
        agent_id="main",
        family_id=caller.family_id,
        parent_session_id=caller.session_id,
    )


ROOT = AgentRef(session_id="root", agent_id="main", family_id="root")
"""A root session's ref: its ``family_id`` is its own ``session_id``."""


class PlanExecutor:
    """Runs plans through ``call``; ``children`` counts the child sessions the ``agent`` tool started."""

    def __init__(self, call: ToolCaller, child: TaskPlan | None = None) -> None:
        self._call, self._child = call, child
        self.children = 0

    async def run(self, plan: TaskPlan, caller: AgentRef = ROOT) -> str:
        """Execute every turn of ``plan``; the last turn's answer."""
        results: dict[str, Any] = {}
        answer = ""
        for turn in plan.turns:
            await self._steps(turn.steps, results, caller)
            answer = turn.answer(tuple(resolve(ref, results) for ref in turn.reads))
        return answer

    async def _steps(self, steps: tuple[Step, ...], results: dict[str, Any], caller: AgentRef) -> None:
        pending = list(steps)
        while pending:
            ready = [s for s in pending if dependencies(s) <= results.keys()]
            if not ready:
                raise PlanFailed(f"steps {[s.id for s in pending]} wait for steps that never run")
            done = await asyncio.gather(*(self._step(s, results, caller) for s in ready))
            for step, value in zip(ready, done, strict=True):
                results[step.id] = value
            pending = [s for s in pending if s not in ready]

    async def _step(self, step: Step, results: Mapping[str, Any], caller: AgentRef) -> Any:
        if step.each is None:
            return await self._attempt(step, resolve(dict(step.arguments), results), caller)
        items = resolve(step.each, results)
        if not isinstance(items, list):
            raise PlanFailed(f"{step.id} fans out over {type(items).__name__}, not a list")
        calls = [self._attempt(step, resolve(dict(step.arguments), results, item), caller) for item in items]
        return list(await asyncio.gather(*calls))

    async def _attempt(self, step: Step, arguments: JSONObject, caller: AgentRef) -> JSONValue:
        for attempt in range(step.retries + 1):
            try:
                child = step.child or self._child
                if step.tool == AGENT_TOOL and child is not None:
                    self.children += 1
                    return {"answer": await self.run(child, child_of(caller, self.children))}
                return await self._call(step.tool, arguments, caller)
            except ToolFailure as error:
                if attempt == step.retries:
                    raise PlanFailed(f"{step.id}: {step.tool} failed {attempt + 1} time(s): {error}") from error
        raise AssertionError("unreachable")  # the loop returns or raises


__all__ = ["AGENT_TOOL", "ROOT", "PlanExecutor", "PlanFailed", "ToolCaller", "child_of", "resolve", "value_at"]
