"""What the plugin keeps per host for workflows (ADR 0116): the engine, its tool, ``/workflow``, background runs.

A :class:`WorkflowDesk` exists for a host that lends child agents
(:func:`hookspecs.children.child_agents_of`); the plugin keeps it in the
host's plugin state beside its controller. It offers ``run_workflow`` to a
root session in code mode (a child of a workflow gets no tool that starts
more children), answers ``/workflow`` (the session's runs: phase, children
running, done and failed, stop reason) and delivers a background run's
settled report as one context message at the session's next model step.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence

import orjson

from hookspecs import (
    AgentRef,
    CommandReceipt,
    CommandRequest,
    CommandSpec,
    ContextMessage,
    HostServices,
    JSONObject,
    ReceiptStatus,
    StepInfo,
    ToolContext,
    ToolDefinition,
    TurnStart,
    TurnSummary,
)
from hookspecs.children import ChildAgents, child_agents_of
from ptc_plus.config import load_config
from ptc_plus.i18n import message
from ptc_plus.workflow.caps import WorkflowCaps, caps_from
from ptc_plus.workflow.engine import WorkflowEngine, WorkflowRun
from ptc_plus.workflow.errors import (
    RalphCostWithoutPrices,
    RalphObjectiveInvalid,
    RalphRoundsInvalid,
    WorkflowError,
)
from ptc_plus.workflow.prices import PriceSheet
from ptc_plus.workflow.ralph import MAX_OBJECTIVE_CHARS, RalphOutcome, RalphRun
from ptc_plus.workflow.ralph_tool import RalphGrants, ralph_definition
from ptc_plus.workflow.tool import run_workflow_definition

COMMAND = "workflow"
RALPH = "ralph"


def workflow_commands() -> Sequence[CommandSpec]:
    """The slash commands of workflows (listed whether or not the host lends child agents: they say why not)."""
    return [
        CommandSpec(name=COMMAND, summary=message("ptc.workflow.cmd.summary")),
        CommandSpec(name=RALPH, summary=message("ptc.ralph.cmd.summary")),
    ]


class WorkflowDesk:
    def __init__(self, services: HostServices, children: ChildAgents, caps: WorkflowCaps | None = None) -> None:
        self.services = services
        self.children = children
        self.caps = caps
        """Caps set by the embedder (a deployment, a test); ``None``: each run reads ``[workflow]`` of its workspace."""
        self.engine = WorkflowEngine(services, children)
        self._background: dict[str, list[WorkflowRun]] = {}
        """Session id → background runs whose report was not delivered yet."""
        self.ralphs: dict[str, list[tuple[RalphRun, asyncio.Task[RalphOutcome]]]] = {}
        """Session id → its Ralph runs (started by the user's ``/ralph``), oldest first."""
        self._ralph_delivered: set[str] = set()
        self.max_rounds: int | None = None
        """Ralph's ceiling set by the embedder; ``None``: ``[workflow] max_rounds`` of the workspace."""
        self._tool = run_workflow_definition(self.engine, WorkflowCaps(), self._caps_for, self._adopt)
        self.grants = RalphGrants()
        """Which root sessions' current turn asked for Ralph (contract 1.6, ADR 0125)."""
        self._ralph_tool = ralph_definition(self.grants, self._ralph_from_tool)

    @classmethod
    def for_host(cls, services: HostServices) -> WorkflowDesk | None:
        """A desk for the host behind ``services``, or ``None`` when it lends no child agents."""
        children = child_agents_of(services)
        return cls(services, children) if children is not None else None

    @staticmethod
    def command_for(desk: WorkflowDesk | None, request: CommandRequest) -> CommandReceipt | None:
        """``/workflow`` (and ``/ralph``) of a host with or without child agents."""
        if desk is None:
            return CommandReceipt(status=ReceiptStatus.FAILED, text=message("ptc.workflow.cmd.no-children"))
        return desk.command(request)

    @staticmethod
    def availability(desk: WorkflowDesk | None, held: bool) -> str:
        """The ``/capabilities`` line about workflows: offered, or why not."""
        if desk is None:
            return message("ptc.workflow.capabilities.no-children")
        return message("ptc.workflow.capabilities.offered" if held else "ptc.workflow.capabilities.native")

    def _caps_for(self, context: ToolContext) -> WorkflowCaps:
        if self.caps is not None:
            return self.caps
        # Read at each start: the user file and the workspace file as they are now (the workspace only lowers).
        return caps_from(load_config(context.services.workspace).config.workflow)

    def _adopt(self, run: WorkflowRun) -> None:
        self._background.setdefault(run.agent.session_id, []).append(run)

    def tools(self, agent: AgentRef, *, code_mode: bool = True) -> list[ToolDefinition]:
        """``run_workflow`` for a root session in code mode; ``ralph`` for one whose current turn asked for it."""
        if agent.parent_session_id is not None:
            return []
        return [*([self._tool] if code_mode else []), *([self._ralph_tool] if self.grants.granted(agent) else [])]

    def turn_started(self, turn: TurnStart) -> None:
        """Contract 1.6: the turn's user text (or the host's grant) decides whether ``ralph`` is offered."""
        self.grants.turn_started(turn)

    def turn_settled(self, summary: TurnSummary) -> None:
        self.grants.turn_ended(summary.agent, summary.turn)  # a 1.6 host reports no other end of a turn

    def turn_ended(self, agent: AgentRef, turn: int) -> None:
        """Contract 1.7: however the turn ended, its grant ends with it (ADR 0133)."""
        self.grants.turn_ended(agent, turn)

    def context_messages(self, step: StepInfo) -> list[ContextMessage]:
        """Each background run (and Ralph run) of the session that settled since: its report, once."""
        ralph = self.ralph_messages(step)
        waiting = self._background.get(step.agent.session_id)
        if not waiting:
            return ralph
        settled = [run for run in waiting if run.settled is not None]
        for run in settled:
            waiting.remove(run)
        out = []
        for run in settled:
            report = run.settled
            assert report is not None
            text = message("ptc.workflow.background.settled", "en", run=run.run_id, stop=str(report.stop_reason))
            body = report.to_json()
            out.append(
                ContextMessage(provenance=f"workflow:{run.run_id}", text=f"{text}\n{orjson.dumps(body).decode()}")
            )
        return [*out, *ralph]

    def command(self, request: CommandRequest) -> CommandReceipt | None:
        if request.name == RALPH:
            return self._ralph(request)
        if request.name != COMMAND:
            return None
        runs = self.engine.runs.get(request.agent.session_id, [])
        if not runs:
            return CommandReceipt(status=ReceiptStatus.SHOWN, text=message("ptc.workflow.cmd.none"))
        lines = [message("ptc.workflow.cmd.head", count=len(runs))]
        data = []
        for run in runs:
            counts = run.progress.counters()
            stop = str(run.settled.stop_reason) if run.settled is not None else message("ptc.workflow.cmd.running")
            lines.append(
                message(
                    "ptc.workflow.cmd.run",
                    run=run.run_id,
                    phase=run.progress.current or "-",
                    stop=stop,
                    **{k: counts[k] for k in ("running", "succeeded", "failed", "reaped")},
                )
            )
            data.append({"run_id": run.run_id, "phase": run.progress.current, "stop": stop, **counts})
        return CommandReceipt(status=ReceiptStatus.SHOWN, text="\n".join(lines), data={"runs": data})

    def _ralph(self, request: CommandRequest) -> CommandReceipt:
        """``/ralph OBJECTIVE [--max-rounds N]`` starts a Ralph run; ``/ralph`` alone shows the session's."""
        sid = request.agent.session_id
        if not request.args:
            runs = self.ralphs.get(sid, [])
            if not runs:
                return CommandReceipt(status=ReceiptStatus.SHOWN, text=message("ptc.ralph.none"))
            lines = []
            for run, _task in runs:
                if run.outcome is not None:
                    lines.append(run.outcome.text())
                else:
                    lines.append(message("ptc.ralph.running", run=run.run_id, round=run.round, rounds=run.max_rounds))
            data = [run.outcome.to_json() for run, _ in runs if run.outcome is not None]
            return CommandReceipt(status=ReceiptStatus.SHOWN, text="\n\n".join(lines), data={"settled": data})
        try:
            objective, rounds = self._ralph_arguments(request)
            run = self._start_ralph(request.agent, objective, rounds)
        except WorkflowError as refused:
            return CommandReceipt(status=ReceiptStatus.FAILED, text=refused.message(), data={"code": refused.code})
        text = message("ptc.ralph.started", run=run.run_id, rounds=run.max_rounds)
        return CommandReceipt(
            status=ReceiptStatus.SHOWN, text=text, data={"run_id": run.run_id, "max_rounds": run.max_rounds}
        )

    def _start_ralph(self, agent: AgentRef, objective: str, rounds: int | None) -> RalphRun:
        """Start a Ralph run for ``agent`` (the user asked: ``/ralph``, or the tool under a grant)."""
        ceiling = self._rounds_ceiling()
        if rounds is not None and not 1 <= rounds <= ceiling:
            raise RalphRoundsInvalid(value=str(rounds), ceiling=ceiling)
        if not objective.strip() or len(objective) > MAX_OBJECTIVE_CHARS:
            raise RalphObjectiveInvalid(limit=MAX_OBJECTIVE_CHARS)
        section = load_config(self.services.workspace).config.workflow
        prices = PriceSheet.parse(section.prices)  # the user file's alone: a workspace's are dropped on load
        max_cost = section.ralph_max_cost or None
        if max_cost is not None and not prices.prices:
            raise RalphCostWithoutPrices(cap=max_cost)
        run = RalphRun(
            services=self.services,
            children=self.children,
            parent=agent,
            objective=objective.strip(),
            max_rounds=rounds or ceiling,
            max_tokens=section.ralph_max_tokens or None,
            max_cost=max_cost,
            prices=prices,
            listeners=self.engine.listeners,
        )
        task = asyncio.get_running_loop().create_task(run.run())
        self.ralphs.setdefault(agent.session_id, []).append((run, task))
        return run

    def _ralph_from_tool(self, agent: AgentRef, objective: str, rounds: int | None) -> JSONObject:
        run = self._start_ralph(agent, objective, rounds)
        note = message("ptc.ralph.tool.started", "en", run=run.run_id, rounds=run.max_rounds)
        return {"job": run.run_id, "max_rounds": run.max_rounds, "note": note}

    def _rounds_ceiling(self) -> int:
        if self.max_rounds is not None:
            return self.max_rounds
        return load_config(self.services.workspace).config.workflow.max_rounds

    def _ralph_arguments(self, request: CommandRequest) -> tuple[str, int]:
        ceiling = self._rounds_ceiling()
        words, rounds = list(request.args), ceiling
        if "--max-rounds" in words:
            at = words.index("--max-rounds")
            raw = words[at + 1] if at + 1 < len(words) else ""
            del words[at : at + 2]
            if not raw.isdigit() or int(raw) < 1:
                raise RalphRoundsInvalid(value=raw or "-", ceiling=ceiling)
            if int(raw) > ceiling:
                raise RalphRoundsInvalid(value=raw, ceiling=ceiling)
            rounds = int(raw)
        objective = " ".join(words).strip()
        if not objective or len(objective) > MAX_OBJECTIVE_CHARS:
            raise RalphObjectiveInvalid(limit=MAX_OBJECTIVE_CHARS)
        return objective, rounds

    def ralph_messages(self, step: StepInfo) -> list[ContextMessage]:
        """Each Ralph run of the session that ended since: its outcome, once, for the model to know."""
        out = []
        for run, _task in self.ralphs.get(step.agent.session_id, []):
            if run.outcome is not None and run.run_id not in self._ralph_delivered:
                self._ralph_delivered.add(run.run_id)
                body = orjson.dumps(run.outcome.to_json()).decode()
                out.append(ContextMessage(provenance=f"ralph:{run.run_id}", text=f"{run.outcome.text('en')}\n{body}"))
        return out

    async def aclose(self) -> None:
        tasks = [task for runs in self.ralphs.values() for _run, task in runs if not task.done()]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await self.engine.aclose()
