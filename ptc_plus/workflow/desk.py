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

from collections.abc import Sequence

import orjson

from hookspecs import (
    AgentRef,
    CommandReceipt,
    CommandRequest,
    CommandSpec,
    ContextMessage,
    HostServices,
    ReceiptStatus,
    StepInfo,
    ToolContext,
    ToolDefinition,
)
from hookspecs.children import ChildAgents, child_agents_of
from ptc_plus.i18n import message
from ptc_plus.config import load_config
from ptc_plus.workflow.caps import WorkflowCaps, caps_from
from ptc_plus.workflow.engine import WorkflowEngine, WorkflowRun
from ptc_plus.workflow.tool import run_workflow_definition

COMMAND = "workflow"


def workflow_commands() -> Sequence[CommandSpec]:
    """The slash commands of workflows (listed whether or not the host lends child agents: they say why not)."""
    return [CommandSpec(name=COMMAND, summary=message("workflow.cmd.summary"))]


class WorkflowDesk:
    def __init__(self, services: HostServices, children: ChildAgents, caps: WorkflowCaps | None = None) -> None:
        self.services = services
        self.children = children
        self.caps = caps
        """Caps set by the embedder (a deployment, a test); ``None``: each run reads ``[workflow]`` of its workspace."""
        self.engine = WorkflowEngine(services, children)
        self._background: dict[str, list[WorkflowRun]] = {}
        """Session id → background runs whose report was not delivered yet."""
        self._tool = run_workflow_definition(self.engine, WorkflowCaps(), self._caps_for, self._adopt)

    @classmethod
    def for_host(cls, services: HostServices) -> WorkflowDesk | None:
        """A desk for the host behind ``services``, or ``None`` when it lends no child agents."""
        children = child_agents_of(services)
        return cls(services, children) if children is not None else None

    @staticmethod
    def command_for(desk: WorkflowDesk | None, request: CommandRequest) -> CommandReceipt | None:
        """``/workflow`` (and ``/ralph``) of a host with or without child agents."""
        if desk is None:
            return CommandReceipt(status=ReceiptStatus.FAILED, text=message("workflow.cmd.no-children"))
        return desk.command(request)

    @staticmethod
    def availability(desk: WorkflowDesk | None, held: bool) -> str:
        """The ``/capabilities`` line about workflows: offered, or why not."""
        if desk is None:
            return message("workflow.capabilities.no-children")
        return message("workflow.capabilities.offered" if held else "workflow.capabilities.native")

    def _caps_for(self, context: ToolContext) -> WorkflowCaps:
        if self.caps is not None:
            return self.caps
        # Read at each start: the user file and the workspace file as they are now (the workspace only lowers).
        return caps_from(load_config(context.services.workspace).config.workflow)

    def _adopt(self, run: WorkflowRun) -> None:
        self._background.setdefault(run.agent.session_id, []).append(run)

    def tools(self, agent: AgentRef) -> list[ToolDefinition]:
        """``run_workflow`` for a root session (the caller checked code mode is in force)."""
        return [self._tool] if agent.parent_session_id is None else []

    def context_messages(self, step: StepInfo) -> list[ContextMessage]:
        """Each background run of the session that settled since: its report, once."""
        waiting = self._background.get(step.agent.session_id)
        if not waiting:
            return []
        settled = [run for run in waiting if run.settled is not None]
        for run in settled:
            waiting.remove(run)
        out = []
        for run in settled:
            report = run.settled
            assert report is not None
            text = message("workflow.background.settled", "en", run=run.run_id, stop=str(report.stop_reason))
            body = report.to_json()
            out.append(
                ContextMessage(provenance=f"workflow:{run.run_id}", text=f"{text}\n{orjson.dumps(body).decode()}")
            )
        return out

    def command(self, request: CommandRequest) -> CommandReceipt | None:
        if request.name != COMMAND:
            return None
        runs = self.engine.runs.get(request.agent.session_id, [])
        if not runs:
            return CommandReceipt(status=ReceiptStatus.SHOWN, text=message("workflow.cmd.none"))
        lines = [message("workflow.cmd.head", count=len(runs))]
        data = []
        for run in runs:
            counts = run.progress.counters()
            stop = str(run.settled.stop_reason) if run.settled is not None else message("workflow.cmd.running")
            lines.append(
                message(
                    "workflow.cmd.run",
                    run=run.run_id,
                    phase=run.progress.current or "-",
                    stop=stop,
                    **{k: counts[k] for k in ("running", "succeeded", "failed", "reaped")},
                )
            )
            data.append({"run_id": run.run_id, "phase": run.progress.current, "stop": stop, **counts})
        return CommandReceipt(status=ReceiptStatus.SHOWN, text="\n".join(lines), data={"runs": data})

    async def aclose(self) -> None:
        await self.engine.aclose()
