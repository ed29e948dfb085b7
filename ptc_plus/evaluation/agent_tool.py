"""The ``agent`` host tool: a child agent, as a host's Task tool starts one.

Its body forks a child of the calling session (same family, a view never
wider than the caller's), gives the child its own model (for a scripted run,
a driver over the task's child script in the same style), runs one turn with
the prompt and returns ``{"answer": final_text}``. The child's exchanges go to
the run's log under its own session id with the caller as parent, so family
totals include them.
"""

from __future__ import annotations

from collections.abc import Callable

from hookspecs import JSONObject, JSONValue, ToolContext, ToolDefinition, ToolFailure
from hookspecs.reference import HostError, Model, ReferenceHost
from hookspecs.services import tool
from ptc_plus.errors import PtcError
from ptc_plus.evaluation.driver import SessionIds
from ptc_plus.evaluation.errors import EvaluationError

AGENT = "agent"

AGENT_SCHEMA: JSONObject = {
    "type": "object",
    "properties": {
        "prompt": {"type": "string", "description": "The child agent's task, complete in itself."},
        "tools": {
            "type": "array",
            "items": {"type": "string"},
            "description": "Tool names the child may use (default: all of yours).",
        },
    },
    "required": ["prompt"],
    "additionalProperties": False,
}

AGENT_OUTPUT: JSONObject = {
    "type": "object",
    "properties": {"answer": {"type": "string", "description": "The child's final answer."}},
    "required": ["answer"],
}
"""Declared so a program may read ``["answer"]`` without a probe: the shape is the contract's (ADR 0094)."""

ChildModel = Callable[[SessionIds], Model]
"""Makes the model of one child: told the ids its exchanges are logged under (set before its first step)."""


def agent_tool(
    host_of: Callable[[], ReferenceHost],
    child_model: ChildModel,
    *,
    keep: frozenset[str] = frozenset(),
    failures: list[EvaluationError] | None = None,
) -> ToolDefinition:
    """The ``agent`` tool of the host ``host_of()`` returns (asked at each call: the tool is made before
    the host, which takes its tools when it is built).

    :param child_model: the model of each child it starts.
    :param keep: tool names the child keeps even when ``tools`` narrows its view (``run_code``: a child in
        a code style works through programs, whatever host tools it is given).
    :param failures: where an engine error of a child's run is also put (the child's script and session
        disagreed): the caller only reads a failed tool, the runner must report the run as broken.
    """

    @tool(
        AGENT,
        description="Start a child agent on a self-contained sub-task; returns its final answer.",
        input_schema=AGENT_SCHEMA,
        output_schema=AGENT_OUTPUT,
    )
    async def run_child(arguments: JSONObject, context: ToolContext) -> JSONValue:
        caller = context.call.caller
        host = host_of()
        parent = host.session(caller.session_id)
        requested = arguments.get("tools")
        tools: list[str] | None = None
        if isinstance(requested, list):
            offered = set(host.view(caller).names())
            tools = sorted({str(t) for t in requested} | (keep & offered))
        ids = SessionIds()
        try:
            child = await host.fork_session(parent, title=f"child of {caller.session_id}", tools=tools)
            ids.session_id = child.agent.session_id
            ids.parent_session_id = caller.session_id
            child.model = child_model(ids)
            summary = await child.run_turn(str(arguments["prompt"]))
        except EvaluationError as error:
            if failures is not None:
                failures.append(error)
            raise ToolFailure(error.code, error.message()) from None
        except (PtcError, HostError) as error:
            raise ToolFailure(error.code, error.message()) from None
        return {"answer": summary.final_text}

    return run_child
