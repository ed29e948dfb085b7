"""What a task of the token evaluation is: a prompt, a plan, an oracle; and the styles it runs in.

A task is written once, as a plan (:mod:`.task_plan`): its needs in the
user's words, the tools that meet them, their arguments and dependencies.
Every style runs the same plan through its policy (:mod:`.policy`, ADR 0094),
which decides from the plan and from what each request carries what that
style's model sends. The oracle judges the final answer and the end state.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs

from hookspecs.services import ToolDefinition
from hookspecs.types import JSONValue, ToolSpec
from ptc_plus.evaluation.task_plan import TaskPlan


class Style(enum.Enum):
    """How the model is given its tools (the issue's styles; ADR 0094 for how a plan runs in each)."""

    NATIVE = "native"
    """Plugin off: every schema in every request; a plan's independent calls go out in one response."""
    NATIVE_SEQUENTIAL = "native-sequential"
    """As native, but one call per model step: the bound on the other side of batching."""
    TOOL_SEARCH = "tool-search"
    """Plugin off: schemas deferred, loaded by a ``tool_search`` tool (the anchor's pattern)."""
    TOOL_SEARCH_MATURE = "tool-search-mature"
    """Tool search with the most used tools of the warm-up statistics always loaded."""
    PTC = "ptc"
    """Plugin on, management off: ``run_code`` with the full SDK."""
    PTC_SEARCH = "ptc-search"
    """Code mode with every contract deferred, found through ``capabilities.search`` (management on,
    budget 0, no statistics): the "code execution with MCP" pattern."""
    PTC_PLUS_COLD = "ptc-plus-cold"
    """Management on, no statistics."""
    PTC_PLUS_MATURE = "ptc-plus-mature"
    """Management on, statistics from the warm-up families (never the measured tasks)."""
    PTC_PLUS_BOTH = "ptc-plus-both"
    """PTC Plus cold with the ``both`` presentation: code mode, and the full tools offered directly too."""


@attrs.frozen(kw_only=True)
class Answer:
    """A final answer's text (what a plan's ``answer`` function writes)."""

    text: str


@attrs.frozen(kw_only=True)
class Observation:
    """What the step of an action returned.

    :ivar ok: whether the call (or the program) succeeded.
    :ivar value: the tool's value (a program's returned value); ``None`` when not ``ok``.
    :ivar error: the error text the model read; ``""`` when ``ok``.
    """

    ok: bool
    value: JSONValue = None
    error: str = ""


@attrs.frozen(kw_only=True)
class EndState:
    """What the oracle may inspect after the run: the workspace and the world's state."""

    workspace: Path
    world: Any
    """The object the suite's ``world`` factory returned for this run (records, notes, counters)."""


@attrs.frozen(kw_only=True)
class Verdict:
    """The oracle's judgement; ``reason`` says what was wrong (empty when ``passed``)."""

    passed: bool
    reason: str = ""


Oracle = Callable[[str, EndState], Verdict]
"""``(final answer text, end state) -> verdict``: checks the answer *and* the end state, never "it ran"."""


@attrs.frozen(kw_only=True)
class Task:
    """One task of the suite.

    :ivar id: stable id (``t01-find-todos``); results are keyed by it.
    :ivar category: what it exercises (``find-count``, ``aggregate``, ``cross-reference``, ``best-of-n``,
        ``multi-step``, ``long-tail``, ``child``, ``recovery``, ``one-call``, ``mcp``, ...).
    :ivar prompt: the user's message.
    :ivar setup: writes the task's fixtures into the workspace and the world before the session starts.
    :ivar plan: the task as a plan (:mod:`.task_plan`): every style runs it through its policy (:mod:`.policy`);
        its first turn's prompt is :attr:`prompt`. ``None`` only for a task run by a real model alone.
    """

    id: str
    category: str
    prompt: str
    setup: Callable[[Path, Any], None]
    oracle: Oracle
    plan: TaskPlan | None = None


@attrs.frozen(kw_only=True)
class Suite:
    """The versioned task suite (``benchmarks/tasks``): fixed before any result is looked at.

    :ivar version: bumped whenever a task, script, oracle or fixture changes.
    :ivar tasks: the measured tasks.
    :ivar warmup: a separate, fixed set whose families build the mature statistics (never measured).
    :ivar world: makes a fresh world for one run: ``world(workspace)`` → the state the tools share.
    :ivar tools: the executable tools over a world: ``tools(workspace, world)``.
    :ivar filler: ``filler(n)`` → ``n`` schema-only tools (corpus first, then generated), deterministic.
    :ivar task_filler: ``task_filler(task, n)`` → ``n`` schema-only tools chosen for ``task`` (a suite whose tasks
        have catalogs of their own: BFCL's distractors skip the task's own classes); ``None``: :attr:`filler`.
    :ivar mcp: whether every run's catalog holds the MCP bridge's tools (a suite with an MCP task); a suite whose
        tasks come with their own catalogs leaves them out.
    :ivar warmup_for: see the attribute.
    :ivar source: where the tasks come from, for the report (a public package's name, version, digest and
        licence); ``""`` for tasks written here.
    """

    version: str
    tasks: tuple[Task, ...]
    warmup: tuple[Task, ...]
    world: Callable[[Path], Any]
    tools: Callable[[Path, Any], list[ToolDefinition]]
    filler: Callable[[int], list[ToolSpec]]
    task_filler: Callable[[Task, int], list[ToolSpec]] | None = None
    mcp: bool = True
    source: str = ""
    warmup_for: Callable[[Task], tuple[Task, ...]] | None = None
    """The warm-up set whose statistics ``task``'s mature runs start from (a suite measuring every task it has
    warms up on the other tasks of a fold, never on ``task`` itself); ``None``: :attr:`warmup` for every task."""

    def warmup_of(self, task: Task) -> tuple[Task, ...]:
        """The warm-up set for ``task``'s mature runs."""
        return self.warmup if self.warmup_for is None else self.warmup_for(task)


OWN_CATALOG = 0
"""The catalog size that means "each task's own tools, no filler" (BFCL's tasks at their own catalogs)."""


def catalog_label(catalog: int) -> str:
    """How a catalog size is written in the report and the charts: ``2,000 tools``, or ``own catalog``."""
    return "own catalog" if catalog == OWN_CATALOG else f"{catalog:,} tools"
