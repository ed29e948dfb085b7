"""Ralph: fresh-context iteration, a deployment-fixed loop of fresh children (ADR 0117).

The user gives an objective and at most ``max_rounds`` (``[workflow]
max_rounds`` is the ceiling, 256 by default); nothing else of the loop is
theirs to change: the round prompt, the report schema, the validation and
the terminal states are fixed here. Each round is a fresh child agent
(:class:`~hookspecs.children.ChildAgents`): no parent conversation, no
earlier child's session. The shared workspace is the memory; the only thing
carried from one round to the next is the previous round's **report**
``{status, summary, evidence, next_steps, blocker}``, validated:

- ``continue`` needs non-empty ``next_steps`` and no ``blocker``;
- ``complete`` needs non-empty ``evidence``, no ``next_steps`` and no ``blocker``;
- ``blocked`` needs a concrete ``blocker`` (at least :data:`MIN_BLOCKER_CHARS` characters);
- the whole report, as JSON, is at most :data:`HANDOFF_CHARS` characters.

Terminal states: ``complete``, ``blocked``, ``budget-limited`` (rounds,
tokens or cost ran out, or a cost cap could not be checked: never reported as done) and ``round-failed`` (a child failed
ordinarily, or its report broke the rules). A ``complete`` report's evidence
is the child's claim, for the user to check: the loop validates fields, not facts.
"""

from __future__ import annotations

import asyncio
import enum
import itertools

import attrs
import jsonschema
import orjson

from hookspecs import AgentRef, HostServices, JSONObject
from hookspecs.children import ChildAgents, ChildRequest
from ptc_plus.i18n import message
from ptc_plus.workflow.prices import PriceSheet
from ptc_plus.workflow.progress import Listener, Progress, ProgressEvent

DEFAULT_MAX_ROUNDS = 256
HANDOFF_CHARS = 4000
MIN_BLOCKER_CHARS = 12
MAX_OBJECTIVE_CHARS = 8000

REPORT_SCHEMA: JSONObject = {
    "type": "object",
    "properties": {
        "status": {"enum": ["continue", "complete", "blocked"]},
        "summary": {"type": "string", "minLength": 1},
        "evidence": {"type": "array", "items": {"type": "string", "minLength": 1}},
        "next_steps": {"type": "array", "items": {"type": "string", "minLength": 1}},
        "blocker": {"type": "string"},
    },
    "required": ["status", "summary", "evidence", "next_steps", "blocker"],
    "additionalProperties": False,
}
"""What every round's child answers with (fixed by the deployment, never by the user)."""


class RalphState(enum.StrEnum):
    COMPLETE = "complete"
    BLOCKED = "blocked"
    BUDGET_LIMITED = "budget-limited"
    ROUND_FAILED = "round-failed"
    CANCELLED = "cancelled"


@attrs.frozen(kw_only=True)
class RalphOutcome:
    """How a Ralph run ended, with every round's report (the last one's evidence is a claim to check)."""

    run_id: str
    state: RalphState
    rounds: int
    reports: tuple[JSONObject, ...] = ()
    detail: str = ""
    tokens: int = 0
    cost: float | None = None
    """What the children cost by the user's price sheet (``None``: no cost cap, so not priced)."""

    def to_json(self) -> JSONObject:
        return {
            "run_id": self.run_id,
            "state": str(self.state),
            "rounds": self.rounds,
            "reports": list(self.reports),
            "detail": self.detail,
            "tokens": self.tokens,
            "cost": self.cost,
        }

    def text(self, lang: str | None = None) -> str:
        """The outcome for the user: the state, the last summary, and evidence marked as a claim."""
        lines = [message(f"ptc.ralph.state.{self.state}", lang, run=self.run_id, rounds=self.rounds)]
        if self.detail:
            lines.append(self.detail)
        last = self.reports[-1] if self.reports else None
        if last is not None:
            lines.append(message("ptc.ralph.summary", lang, summary=last["summary"]))
            if self.state is RalphState.COMPLETE:
                lines.append(message("ptc.ralph.evidence-claim", lang))
                lines.extend(f"  - {item}" for item in last["evidence"])
            if self.state is RalphState.BLOCKED:
                lines.append(message("ptc.ralph.blocker", lang, blocker=last["blocker"]))
        return "\n".join(lines)


def report_problem(report: object) -> str:
    """Why ``report`` may not be handed on (``""``: it may)."""
    try:
        jsonschema.validate(report, REPORT_SCHEMA)
    except jsonschema.ValidationError as error:
        return f"schema: {error.message[:200]}"
    assert isinstance(report, dict)
    status, steps, evidence, blocker = report["status"], report["next_steps"], report["evidence"], report["blocker"]
    if status == "continue" and (not steps or blocker.strip()):
        return "continue needs next_steps and no blocker"
    if status == "complete" and (not evidence or steps or blocker.strip()):
        return "complete needs evidence, no next_steps and no blocker"
    if status == "blocked" and len(blocker.strip()) < MIN_BLOCKER_CHARS:
        return f"blocked needs a concrete blocker (at least {MIN_BLOCKER_CHARS} characters)"
    size = len(orjson.dumps(report).decode())
    if size > HANDOFF_CHARS:
        return f"the report is {size} characters; a hand-off is at most {HANDOFF_CHARS}"
    return ""


def round_prompt(objective: str, number: int, max_rounds: int, previous: JSONObject | None) -> str:
    """The fixed prompt of round ``number``: the objective, the round, the previous report (if any)."""
    handed = orjson.dumps(previous).decode() if previous is not None else message("ptc.ralph.prompt.first", "en")
    return message("ptc.ralph.prompt", "en", objective=objective, round=number, rounds=max_rounds, previous=handed)


class RalphRun:
    """One Ralph loop for ``parent``; :meth:`run` drives it to a terminal state (cancel the task to stop it)."""

    _numbers = itertools.count(1)

    def __init__(
        self,
        *,
        services: HostServices,
        children: ChildAgents,
        parent: AgentRef,
        objective: str,
        max_rounds: int,
        max_tokens: int | None = None,
        max_cost: float | None = None,
        prices: PriceSheet | None = None,
        listeners: list[Listener] | None = None,
        child_max_steps: int = 32,
    ) -> None:
        """``max_cost`` needs ``prices`` (the caller refuses a cap without them, ``PTC-8034``)."""
        self.run_id = f"ralph-{next(self._numbers)}@{parent.session_id}"
        self._children = children
        self._parent = parent
        self.objective = objective
        self.max_rounds = max_rounds
        self.max_tokens = max_tokens
        self.max_cost = max_cost
        self._prices = prices if prices is not None else PriceSheet()
        self._cost: float | None = 0.0 if max_cost is not None else None
        self._steps = child_max_steps
        self.progress = Progress(self.run_id, services, parent, listeners if listeners is not None else [])
        self.round = 0
        self.outcome: RalphOutcome | None = None

    async def run(self) -> RalphOutcome:
        reports: list[JSONObject] = []
        tokens = 0
        previous: JSONObject | None = None
        try:
            for number in range(1, self.max_rounds + 1):
                self.round = number
                self.progress.phase(f"round {number}")
                request = ChildRequest(
                    parent=self._parent,
                    prompt=round_prompt(self.objective, number, self.max_rounds, previous),
                    label=f"ralph round {number}",
                    schema=REPORT_SCHEMA,
                    max_steps=self._steps,
                )
                call_id = f"{self.run_id}:{number}"
                self.progress.submitted()
                self.progress.child_started(call_id, request.label, f"round {number}")
                result = await self._children.run(request)
                tokens += result.tokens
                priced = self._prices.cost(result) if self._cost is not None else None
                if self._cost is not None and priced is not None:
                    self._cost += priced
                report, problem = _parse(result.text) if result.ok else (None, result.error or "the child failed")
                self.progress.child_ended(call_id, result, ok=report is not None)
                if report is None:
                    return self._end(RalphState.ROUND_FAILED, number, reports, tokens, problem)
                reports.append(report)
                if report["status"] == "complete":
                    return self._end(RalphState.COMPLETE, number, reports, tokens)
                if report["status"] == "blocked":
                    return self._end(RalphState.BLOCKED, number, reports, tokens)
                if self.max_tokens is not None and tokens >= self.max_tokens:
                    detail = message("ptc.ralph.tokens", tokens=tokens, cap=self.max_tokens)
                    return self._end(RalphState.BUDGET_LIMITED, number, reports, tokens, detail)
                if self.max_cost is not None and priced is None:
                    # A cap that cannot be checked is treated as reached: the loop never runs on unpriced.
                    detail = message("ptc.ralph.cost-unknown", round=number, route=result.route or "-")
                    return self._end(RalphState.BUDGET_LIMITED, number, reports, tokens, detail)
                if self.max_cost is not None and self._cost is not None and self._cost >= self.max_cost:
                    detail = message("ptc.ralph.cost", cost=f"{self._cost:.4f}", cap=self.max_cost)
                    return self._end(RalphState.BUDGET_LIMITED, number, reports, tokens, detail)
                previous = report
            detail = message("ptc.ralph.rounds", rounds=self.max_rounds)
            return self._end(RalphState.BUDGET_LIMITED, self.max_rounds, reports, tokens, detail)
        except asyncio.CancelledError:
            self._end(RalphState.CANCELLED, self.round, reports, tokens)
            raise

    def _end(
        self, state: RalphState, rounds: int, reports: list[JSONObject], tokens: int, detail: str = ""
    ) -> RalphOutcome:
        self.outcome = RalphOutcome(
            run_id=self.run_id,
            state=state,
            rounds=rounds,
            reports=tuple(reports),
            detail=detail,
            tokens=tokens,
            cost=self._cost,
        )
        self.progress.emit(ProgressEvent(run_id=self.run_id, kind="run-ended", detail=str(state)))
        return self.outcome


def _parse(text: str) -> tuple[JSONObject | None, str]:
    body = text.strip()
    if body.startswith("```"):
        body = body.strip("`").removeprefix("json").strip()
    try:
        report = orjson.loads(body)
    except orjson.JSONDecodeError:
        return None, "the report is not JSON"
    problem = report_problem(report)
    return (report, "") if not problem else (None, problem)
