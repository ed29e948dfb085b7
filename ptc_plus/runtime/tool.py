"""The ``run_code`` tool definition (ADR 0014 for its concurrency class).

``run_code(description, code, timeout_s=None)``: the handler builds the
program's namespace from the caller's *current* tool view (minus
``run_code``), runs the program, and returns ``{"value", "logs", "calls",
"notes"}``; a failed run raises :class:`~hookspecs.ToolFailure` with the
outcome kind's code (PTC-2101..2108), the outcome's report as its message
(kind, message, the program's traceback and captured output: what the model
sees, ADR 0052) and ``data`` holding ``kind``, ``message``, ``logs``,
``calls`` and, when present, ``traceback`` and ``tool_name``.
With ``discovery=`` the program's ``capabilities.*`` answer from the
snapshot the provider returns for the caller, asked once per run as it
starts, together with the namespace (ADR 0017); with ``expanded=`` the
contracts those answers deliver in full are reported (ADR 0070).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from hookspecs import (
    AgentRef,
    Concurrency,
    JSONObject,
    JSONValue,
    ToolContext,
    ToolDefinition,
    ToolFailure,
    ToolSpec,
)
from ptc_plus.i18n import message
from ptc_plus.runtime.code_runtime import CodeRuntime
from ptc_plus.runtime.discovery import DiscoveryProvider, ExpansionSink, source_for
from ptc_plus.runtime.errors import InvalidTimeout, RuntimeClosed
from ptc_plus.runtime.kernel.cells import KernelCell
from ptc_plus.runtime.lane import NestedLane
from ptc_plus.runtime.run_limits import KernelMode, RunLimits, resolve_timeout
from ptc_plus.sandbox_policy import SandboxPolicy

TOOL_NAME = "run_code"
SOURCE = "plugin:ptc_plus"

NamespaceFilter = Callable[[AgentRef, Sequence[ToolSpec]], Sequence[ToolSpec]]
"""Narrows the caller's tool view to the program's namespace (e.g. the capability plan drops ``off`` tools)."""
KernelFor = Callable[[ToolContext], KernelCell | None]
"""The kernel session a call's program runs in (``None``: a fresh process for this run)."""


def input_schema(limits: RunLimits) -> JSONObject:
    return {
        "type": "object",
        "properties": {
            "description": {"type": "string", "description": message("runtime.schema.description", "en")},
            "code": {"type": "string", "description": message("runtime.schema.code", "en")},
            "timeout_s": {
                "type": "number",
                "exclusiveMinimum": 0,
                "description": message(
                    "runtime.schema.timeout", "en", default=f"{limits.timeout_s:g}", cap=f"{limits.max_timeout_s:g}"
                ),
            },
        },
        "required": ["description", "code"],
        "additionalProperties": False,
    }


def concurrency_for(policy: SandboxPolicy) -> Concurrency:
    """``read-only`` programs cannot change the workspace and may overlap other tools; others are exclusive."""
    return Concurrency.PARALLEL if policy is SandboxPolicy.READ_ONLY else Concurrency.EXCLUSIVE


def namespace_names(context: ToolContext, namespace_filter: NamespaceFilter | None = None) -> tuple[str, ...]:
    """The tool names of the program's ``tools``: the caller's current view minus ``run_code``."""
    return _namespace(context, namespace_filter)[0]


def _namespace(
    context: ToolContext, namespace_filter: NamespaceFilter | None
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The program's tool names, and those of the caller's view the filter (the session's plan) kept out."""
    view: Sequence[ToolSpec] = context.services.tool_view(context.call.caller)
    kept = view if namespace_filter is None else namespace_filter(context.call.caller, view)
    names = tuple(spec.name for spec in kept if spec.name != TOOL_NAME)
    left_out = set(names) | {TOOL_NAME}
    return names, tuple(spec.name for spec in view if spec.name not in left_out)


def run_code_definition(
    limits: RunLimits | None = None,
    *,
    runtime: CodeRuntime | None = None,
    namespace_filter: NamespaceFilter | None = None,
    concurrency: Concurrency | None = None,
    discovery: DiscoveryProvider | None = None,
    expanded: ExpansionSink | None = None,
    kernel_for: KernelFor | None = None,
) -> ToolDefinition:
    """The ``run_code`` tool backed by ``runtime`` (a new :class:`CodeRuntime` over ``limits`` if omitted).

    ``discovery(agent)`` returns the caller's :class:`~ptc_plus.capabilities.CatalogSnapshot`
    (or ``None``: the program's ``capabilities.*`` raise ``DiscoveryError`` saying
    discovery is unavailable). It is called on the event loop at the start of
    every run, so it should return a snapshot built earlier, not build one.
    ``expanded(agent, contracts)`` is told, from the discovery thread, which contracts
    each of the run's discovery answers delivered in full.
    With ``[runtime] kernel = "session"`` (``limits.kernel``) and ``kernel_for``, each call runs as
    the next cell of the kernel ``kernel_for(context)`` names (ADR 0081).
    """
    runtime = runtime or CodeRuntime(limits)
    limits = runtime.limits
    spec = ToolSpec(
        name=TOOL_NAME,
        description=message("runtime.tool.description", "en"),
        input_schema=input_schema(limits),
        concurrency=concurrency or concurrency_for(limits.policy),
        source=SOURCE,
    )

    async def handler(arguments: JSONObject, context: ToolContext) -> JSONValue:
        try:
            timeout = resolve_timeout(arguments.get("timeout_s"), limits)
        except InvalidTimeout as error:
            raise ToolFailure(error.code, error.message()) from None
        lane = NestedLane(context.services, context.call, sequential=limits.sequential)
        kernel = kernel_for(context) if kernel_for is not None and limits.kernel is KernelMode.SESSION else None
        names, off = _namespace(context, namespace_filter)
        try:
            outcome = await runtime.run(
                str(arguments["code"]),
                workspace=context.services.workspace,
                timeout=timeout,
                tool_names=names,
                off_names=off,
                lane=lane,
                cancelled=context.cancelled,
                discovery=source_for(discovery, context.call.caller, expanded),
                protected=context.services.protected_paths,
                kernel=kernel,
            )
        except RuntimeClosed as closed:
            raise ToolFailure(closed.code, closed.message()) from None
        shape = outcome.shape()
        if outcome.failure is None:
            return shape.tool_value()
        # Hosts show a failed tool's message to the model: the report is what it needs to go on.
        raise ToolFailure(outcome.failure.code, outcome.report(), shape.tool_data())

    return ToolDefinition(spec=spec, handler=handler)
