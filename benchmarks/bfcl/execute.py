"""A plain plan executor: a task's plan run through the world's host tools, no model, no engine.

It checks what the engine relies on, without the engine: the plan's
arguments validate against the tools' input schemas (as the host validates
them), :class:`Ref` arguments resolve from real results, and the plan's
order suffices. ``latest_first`` runs, among the steps whose dependencies
are met, the *last* one first: an order as far from BFCL's as the plan
allows, so a dependency the plan forgot shows as a wrong state or result.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from hookspecs.services import ToolContext, ToolDefinition, ToolFailure
from hookspecs.types import AgentRef, JSONValue, ToolCall
from ptc_plus.evaluation.task_plan import Item, Ref, Step, TaskPlan, dependencies

from .schemas import argument_errors
from .world import BfclWorld


class _Services:
    """The little of ``HostServices`` a BFCL tool body could touch (none of it is used)."""

    def __init__(self, workspace: Path) -> None:
        self.workspace = workspace
        self.user_id = ""
        self.protected_paths: tuple[Path, ...] = ()
        self.token_counter = None
        self.spill_store = None


def resolve(value: Any, results: Mapping[str, JSONValue]) -> JSONValue:
    """``value`` with every :class:`Ref` replaced by the value it names."""
    if isinstance(value, Ref):
        found: Any = results[value.step]
        for key in value.path:
            found = found[key]
        resolved: JSONValue = found
        return resolved
    if isinstance(value, Item):
        raise ValueError("BFCL plans have no fan-out steps")
    if isinstance(value, Mapping):
        return {str(k): resolve(v, results) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [resolve(v, results) for v in value]
    plain: JSONValue = value
    return plain


def _order(steps: tuple[Step, ...], latest_first: bool) -> list[Step]:
    if not latest_first:
        return list(steps)
    pending, done, order = list(steps), set[str](), list[Step]()
    while pending:
        ready = [s for s in pending if dependencies(s) <= done]
        chosen = ready[-1]
        pending.remove(chosen)
        done.add(chosen.id)
        order.append(chosen)
    return order


async def run_plan(
    plan: TaskPlan,
    world: BfclWorld,
    tools: list[ToolDefinition],
    workspace: Path,
    *,
    latest_first: bool = False,
    after_turn: Callable[[int, str], None] | None = None,
) -> list[str]:
    """Run every turn's steps through ``tools`` (validating arguments); each turn's answer, in order.

    ``after_turn(index, answer)`` is called at the end of each turn, before the next one starts.
    """
    by_name = {d.spec.name: d for d in tools}
    answers: list[str] = []
    for turn in plan.turns:
        results: dict[str, JSONValue] = {}
        for step in _order(turn.steps, latest_first):
            arguments = resolve(dict(step.arguments), results)
            assert isinstance(arguments, dict)
            definition = by_name[step.tool]
            errors = argument_errors(definition.spec, arguments)
            if errors:
                raise ValueError(f"{step.id} {step.tool}: the host would refuse these arguments: {errors}")
            context = ToolContext(
                call=ToolCall(
                    call_id=step.id,
                    tool=step.tool,
                    arguments=arguments,
                    caller=AgentRef(session_id="s", agent_id="a", family_id="f"),
                ),
                services=_Services(workspace),  # type: ignore[arg-type]
                cancelled=asyncio.Event(),
            )
            try:
                results[step.id] = await definition.handler(arguments, context)
            except ToolFailure as failure:
                results[step.id] = failure.message
        answers.append(turn.answer(tuple(resolve(ref, results) for ref in turn.reads)))
        if after_turn is not None:
            after_turn(len(answers) - 1, answers[-1])
    return answers
