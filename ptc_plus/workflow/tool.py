"""The ``run_workflow`` tool (ADR 0116).

``run_workflow(script, args=None, description="", max_concurrent_agents=None,
max_total_agents=None, background=false)``: the model's script runs as a
workflow (:mod:`.engine`). In the foreground the call waits for the run and
returns the report's JSON (``stop_reason`` ``completed``, the script's
``value``); a run that did not complete is a tool failure with the stop
reason's code and the report as its message. With ``background`` the call
returns ``{"job": run_id}`` at once; progress is readable with
``/workflow``, and the settled report reaches the model as one context
message at its next step (:meth:`WorkflowDesk.context_messages`).

A start the engine refuses is a tool failure with the refusal's code;
nothing ran. The tool is for the model itself: a program's nested call to it
is refused (a program never starts children).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from hookspecs import (
    Concurrency,
    JSONObject,
    JSONValue,
    ToolContext,
    ToolDefinition,
    ToolFailure,
    ToolSpec,
)
from ptc_plus.i18n import message
from ptc_plus.workflow.caps import WorkflowCaps
from ptc_plus.workflow.engine import StopReason, WorkflowEngine, WorkflowReport, WorkflowRun
from ptc_plus.workflow.errors import WorkflowError

TOOL_NAME = "run_workflow"
SOURCE = "plugin:ptc_plus"
NESTED_REFUSED = "PTC-8007"

CapsFor = Callable[[ToolContext], WorkflowCaps]
Adopt = Callable[[WorkflowRun], None]


def input_schema(caps: WorkflowCaps) -> JSONObject:
    return {
        "type": "object",
        "properties": {
            "description": {"type": "string", "description": message("ptc.workflow.schema.description", "en")},
            "script": {"type": "string", "description": message("ptc.workflow.schema.script", "en")},
            "args": {"description": message("ptc.workflow.schema.args", "en")},
            "max_concurrent_agents": {
                "type": "integer",
                "minimum": 1,
                "description": message("ptc.workflow.schema.concurrent", "en", cap=caps.max_concurrent_agents),
            },
            "max_total_agents": {
                "type": "integer",
                "minimum": 1,
                "description": message("ptc.workflow.schema.total", "en", cap=caps.max_total_agents),
            },
            "background": {"type": "boolean", "description": message("ptc.workflow.schema.background", "en")},
        },
        "required": ["script"],
        "additionalProperties": False,
    }


def run_workflow_definition(
    engine: WorkflowEngine, caps: WorkflowCaps, caps_for: CapsFor, adopt: Adopt
) -> ToolDefinition:
    """The tool over ``engine``; ``caps`` shape the schema, ``caps_for`` gives a call's caps (its workspace's
    file may lower them), ``adopt`` takes a background run (its report is delivered as a context message)."""
    spec = ToolSpec(
        name=TOOL_NAME,
        description=message("ptc.workflow.tool.description", "en"),
        input_schema=input_schema(caps),
        # The script writes nothing (read-only); the children's own tools keep their own classes.
        concurrency=Concurrency.PARALLEL,
        source=SOURCE,
    )

    async def handler(arguments: JSONObject, context: ToolContext) -> JSONValue:
        if context.call.parent_call_id is not None:
            raise ToolFailure(NESTED_REFUSED, message(f"error.{NESTED_REFUSED}", tool=TOOL_NAME))
        requested: dict[str, float | None] = {}
        for name in ("max_concurrent_agents", "max_total_agents"):
            value = arguments.get(name)
            requested[name] = value if isinstance(value, int | float) else None
        try:
            run = engine.start(
                arguments.get("script"),
                arguments.get("args"),
                agent=context.call.caller,
                call_id=context.call.call_id,
                caps=caps_for(context),
                requested=requested,
                protected=context.services.protected_paths,
            )
        except WorkflowError as refused:
            raise ToolFailure(refused.code, refused.message()) from None
        if arguments.get("background") is True:
            adopt(run)
            return {"job": run.run_id, "note": message("ptc.workflow.background.started", "en", run=run.run_id)}
        watcher = _forward(context, run)
        try:
            report = await run.report()
        finally:
            watcher()
        return report_value(report)

    return ToolDefinition(spec=spec, handler=handler)


def report_value(report: WorkflowReport) -> JSONValue:
    """A completed run's JSON; raises the stop reason's :class:`ToolFailure` otherwise."""
    if report.stop_reason is StopReason.COMPLETED:
        return report.to_json()
    raise ToolFailure(report.stop_reason.code, report.text(), report.to_json())


def _forward(context: ToolContext, run: WorkflowRun) -> Callable[[], None]:
    """The host's cancellation of the call cancels the run; returns the function that stops watching."""

    async def watch() -> None:
        await context.cancelled.wait()
        run.cancel()

    task = asyncio.get_running_loop().create_task(watch())

    def stop() -> None:
        task.cancel()

    return stop
