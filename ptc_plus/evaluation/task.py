"""What a task of the token evaluation is: a prompt, two scripts, the words a model searches with, an oracle.

A task is written once and run in every style (:class:`Style`). Its two
scripts are what a model would send, decided from what the tools answered:

- ``native``: one :class:`Call` per model step (every result enters the
  history), then an :class:`Answer`. The *native + tool search* style runs
  the same script; before a call to a tool whose schema the request does not
  carry yet, the engine inserts a ``tool_search`` step with
  ``queries[tool]``.
- ``code``: :class:`Program` steps (``run_code``), then an :class:`Answer`.
  Before a program that uses a tool whose contract the model has not been
  shown (on-demand in the plan), the engine inserts a discovery program
  (``capabilities.search(queries[tool])``), as a model that reads its catalog
  would.

A script is a generator: it yields an action and receives the
:class:`Observation` of that action's step (tool results as values, never
text the engine parsed for it). A script must decide only from observations,
so every style answers from what the tools really returned.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Generator, Mapping
from pathlib import Path
from typing import Any

import attrs

from hookspecs.services import ToolDefinition
from hookspecs.types import JSONObject, JSONValue, ToolSpec
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
class Call:
    """One native tool call, alone in its model step."""

    tool: str
    arguments: JSONObject = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class Program:
    """One ``run_code`` call. ``uses`` names every tool the program calls (their contracts must be known)."""

    code: str
    description: str
    uses: tuple[str, ...] = ()


@attrs.frozen(kw_only=True)
class Answer:
    """The final answer: a model step without tool calls. Ends the script."""

    text: str


Action = Call | Program | Answer


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


Script = Callable[[], Generator[Action, Observation, None]]
"""A fresh generator per run; the first ``send`` is ``None`` (``next``)."""


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
    :ivar native: the native script (also run by the tool-search styles); ``None`` for a task with a plan.
    :ivar code: the code-mode script (every code style); ``None`` for a task with a plan.
    :ivar queries: per tool name, the words a model would search with when it lacks the tool's contract.
    :ivar child: for a task with a child agent: the child's scripts are given by :attr:`child_native` and
        :attr:`child_code`; the parent starts it through the ``agent`` tool.
    :ivar plan: the task as a plan (:mod:`.task_plan`): when set, every style runs it through its policy
        (:mod:`.policy`) and the scripts are not used.
    """

    id: str
    category: str
    prompt: str
    setup: Callable[[Path, Any], None]
    oracle: Oracle
    native: Script | None = None
    code: Script | None = None
    queries: Mapping[str, str] = attrs.field(factory=dict)
    child_native: Script | None = None
    child_code: Script | None = None
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
    """

    version: str
    tasks: tuple[Task, ...]
    warmup: tuple[Task, ...]
    world: Callable[[Path], Any]
    tools: Callable[[Path, Any], list[ToolDefinition]]
    filler: Callable[[int], list[ToolSpec]]
