"""The model-callable ``ralph`` tool, offered only in a turn whose user asked for Ralph (ADR 0125).

Ralph is an unbounded-looking loop of children: it must never start on the
model's own initiative (ADR 0117). The plugin learns each turn's user
message through contract 1.6 (:class:`~hookspecs.types.TurnStart`) and keeps a
**grant** for the turn when, and only when:

- the user's text contains the token ``/ralph`` — at its start or after
  whitespace, followed by whitespace or the end (``please /ralph fix the
  tests``; not ``/ralphs``, ``x/ralph``, ``ralph``), see :func:`asks_for_ralph`; or
- the host granted :data:`GRANT` for the turn (``TurnStart.grants``): a right
  the front door gives on the user's behalf, which nothing the model says sets.

Only a root session's turn earns a grant (a child's "user text" is its
parent's prompt, written by a model). The tool is offered while the grant
lasts; the first run it starts uses it up, and the turn's end drops it however
the turn ended — settled, failed or cancelled (contract 1.7's
``agent_host_turn_ended``, ADR 0133) — so no call after the granting turn,
a host's direct call after a failed turn included, can use it. The next
turn's start drops it too (the only bound a 1.6 host, which reports a
settled turn's end alone, gives after a failed turn). A call without a live
grant — a model calling it anyway, a direct call between turns — is refused
with ``PTC-8033``; a program's nested call with ``PTC-8007``. A 1.5 host
never reports a turn's start, so it never grants: ``/ralph`` stays the way
to start Ralph there.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from hookspecs import (
    AgentRef,
    Concurrency,
    JSONObject,
    JSONValue,
    ToolContext,
    ToolDefinition,
    ToolFailure,
    ToolSpec,
    TurnStart,
)
from ptc_plus.i18n import message
from ptc_plus.workflow.errors import WorkflowError
from ptc_plus.workflow.ralph import MAX_OBJECTIVE_CHARS

RALPH_TOOL = "ralph"
GRANT = "ralph"
"""The name a host puts in ``TurnStart.grants`` to grant the ``ralph`` tool for one turn."""
NOT_ASKED = "PTC-8033"
NESTED_REFUSED = "PTC-8007"
_ASKED = re.compile(r"(?:^|\s)/ralph(?=\s|$)")

Start = Callable[[AgentRef, str, int | None], JSONObject]
"""Starts a Ralph run for the agent with the objective and optional rounds; raises :class:`WorkflowError`."""


def asks_for_ralph(text: str) -> bool:
    """Whether a user's message requests Ralph: it holds the token ``/ralph`` (see the module docstring)."""
    return _ASKED.search(text) is not None


def turn_asks_for_ralph(turn: TurnStart) -> bool:
    """Whether ``turn`` earns a grant: a root session's, with :data:`GRANT` from the host or a user text asking."""
    return turn.agent.parent_session_id is None and (GRANT in turn.grants or asks_for_ralph(turn.user_text))


class RalphGrants:
    """Which root sessions' current turn may start Ralph through the tool (at most once per turn)."""

    def __init__(self) -> None:
        self._live: dict[str, int] = {}
        """Session id → the turn whose user asked for Ralph and has not used it yet."""

    def turn_started(self, turn: TurnStart) -> None:
        sid = turn.agent.session_id
        self._live.pop(sid, None)  # a failed turn's grant never outlives it
        if turn_asks_for_ralph(turn):
            self._live[sid] = turn.turn

    def turn_ended(self, agent: AgentRef, turn: int) -> None:
        """The turn settled, failed or was cancelled: its grant, if still unused, ends with it."""
        if self._live.get(agent.session_id) == turn:
            del self._live[agent.session_id]

    def granted(self, agent: AgentRef) -> bool:
        return agent.session_id in self._live

    def use(self, agent: AgentRef) -> bool:
        """Take the grant (``False``: there is none; the caller refuses)."""
        return self._live.pop(agent.session_id, None) is not None


def ralph_definition(grants: RalphGrants, start: Start) -> ToolDefinition:
    """``ralph(objective, max_rounds=None)``: starts Ralph in the background when the turn's user asked for it."""
    spec = ToolSpec(
        name=RALPH_TOOL,
        description=message("ptc.ralph.tool.description", "en"),
        input_schema={
            "type": "object",
            "properties": {
                "objective": {
                    "type": "string",
                    "maxLength": MAX_OBJECTIVE_CHARS,
                    "description": message("ptc.ralph.tool.objective", "en"),
                },
                "max_rounds": {
                    "type": "integer",
                    "minimum": 1,
                    "description": message("ptc.ralph.tool.rounds", "en"),
                },
            },
            "required": ["objective"],
            "additionalProperties": False,
        },
        concurrency=Concurrency.PARALLEL,
        source="plugin:ptc_plus",
    )

    async def handler(arguments: JSONObject, context: ToolContext) -> JSONValue:
        if context.call.parent_call_id is not None:
            raise ToolFailure(NESTED_REFUSED, message(f"error.{NESTED_REFUSED}", tool=RALPH_TOOL))
        caller = context.call.caller
        if caller.parent_session_id is not None or not grants.granted(caller):
            raise ToolFailure(NOT_ASKED, message(f"error.{NOT_ASKED}"))
        objective, rounds = arguments.get("objective"), arguments.get("max_rounds")
        try:
            # No await from the check to the use: two calls of one step cannot both start a run.
            started = start(caller, objective if isinstance(objective, str) else "", _rounds(rounds))
        except WorkflowError as refused:
            raise ToolFailure(refused.code, refused.message()) from None
        grants.use(caller)
        return started

    return ToolDefinition(spec=spec, handler=handler)


def _rounds(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
