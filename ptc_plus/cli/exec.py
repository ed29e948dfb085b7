"""``ptc-plus exec``: run one program through ``run_code`` on the reference host and print the outcome.

The program goes through the full pipeline a model's call would take
(validation, guard, ``tool-execute`` seam, ordered scheduler, session log),
under the limits a session in the workspace would get: the user and
workspace config files' ``[runtime]`` settings, a workspace file only
tightening the sandbox (ADR 0045). ``--policy`` may only tighten a policy a
config file sets; ``--timeout`` is the run's ``timeout_s``, as a model would
pass it (ADR 0064). Config problems are reported on stderr and the valid keys
still apply, as in a session.

``--tools`` names a tool set the way every command reads it
(:func:`ptc_plus.sdk.load_tool_set`); without it the program has no tools,
and exec says so. With a tool set, programs can use ``capabilities.*`` over a
snapshot of those tools, built once before the run.

``--session DIR`` runs the program as the next cell of the REPL kernel session whose journal
lives in DIR (ADR 0081), outside the workspace (inside it a program could rewrite the
journal: refused, ADR 0085). Every invocation is a new process, so each cell after the
first starts cold: the kernel is rebuilt by replaying the journalled cells with their recorded
tool results (no tool runs twice), and names defined by earlier cells are there. ``--json``
adds ``"repl"``: what recovery did. Two invocations on one DIR run one after the other.

On a terminal the program's output is shown as it is produced; otherwise
(and under ``--json``) it is printed at the end. Ctrl-C cancels the run (its
process group is killed as for any abort), prints what the program printed
so far and the outcome, and exits 130.
Exit code: 0 the program succeeded, 1 it failed, 2 usage error, 130 interrupted.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import signal
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, TextIO

import attrs
import click
import orjson

from hookspecs import AgentRef, ToolDefinition, ToolResult
from ptc_plus.capabilities import build_catalog
from ptc_plus.cli.invocation import WrongInvocation, ptc_command
from ptc_plus.cli.options import json_option, read_tool_set, tools_option, workspace_option
from ptc_plus.cli.output import JSON_VERSION, emit_json
from ptc_plus.cli.workspace_plan import PlannedTools, planned_tools
from ptc_plus.config import WORKSPACE_DIR, Disclosure, LoadedConfig, SandboxPolicy, mcp_servers
from ptc_plus.discovery import CatalogSnapshot, build_snapshot
from ptc_plus.errors import UsageError
from ptc_plus.i18n import message
from ptc_plus.runtime import (
    CodeRuntime,
    DiscoveryProvider,
    ExecutorName,
    KernelFor,
    KernelMode,
    OutputObserver,
    Recovery,
    RunLimits,
    RunShape,
    SessionBusy,
    SessionDirInWorkspace,
    SessionDirRefused,
    run_code_definition,
)
from ptc_plus.sdk import ToolSet
from ptc_plus.session import KernelSession, configured_limits, tighten_executor, tighten_policy

EXIT_INTERRUPTED = 130
MCP_PREFIX = "mcp:"
"""``--tools mcp:NAME``: the tools of configured MCP server NAME (never a ``module:factory``)."""
_STATE_DIRS = frozenset({WORKSPACE_DIR, ".demo", ".agent-host"})
"""State directories a run may create in the workspace (to bind them read-only) and exec removes when empty."""
_STDOUT_STREAMS = ("stdout", "fd1")


def command() -> click.Command:
    @ptc_command("exec", help=message("cli.exec.help"), epilog=message("cli.exec.examples"))
    @click.argument("file", default="-", metavar="[FILE]")
    @click.option(
        "--policy",
        type=click.Choice([str(p) for p in SandboxPolicy]),
        default=None,
        help=message("cli.exec.policy"),
    )
    @click.option(
        "--executor",
        type=click.Choice([str(name) for name in ExecutorName]),
        default=None,
        help=message("cli.exec.executor"),
    )
    @click.option("--timeout", type=float, default=None, metavar="SECONDS", help=message("cli.exec.timeout"))
    @click.option(
        "--session",
        "session",
        type=click.Path(file_okay=False, path_type=Path),
        default=None,
        metavar="DIR",
        help=message("cli.exec.session"),
    )
    @workspace_option()
    @tools_option("cli.exec.tools")
    @click.option("--no-sources", "no_sources", is_flag=True, help=message("cli.exec.no-sources"))
    @json_option("cli.exec.json")
    def exec_(
        file: str,
        policy: str | None,
        executor: str | None,
        timeout: float | None,
        session: Path | None,
        workspace: Path,
        tools: str | None,
        no_sources: bool,
        as_json: bool,
    ) -> int:
        chosen = ExecutorName(executor) if executor is not None else None
        return run(file, policy, timeout, workspace, tools, as_json, session, sources=not no_sources, executor=chosen)

    return exec_


def run(
    file: str,
    policy: str | None,
    timeout: float | None,
    workspace: Path,
    tools: str | None,
    as_json: bool,
    session: Path | None = None,
    *,
    sources: bool = True,
    executor: ExecutorName | None = None,
) -> int:
    """Check the invocation, read the program, run it, print the outcome; returns the exit code.

    The session is planned like any other (:func:`planned_tools`): the tool set's and the allowed MCP
    servers' tools (``sources``; ``--tools mcp:NAME``: that server only) under the workspace's
    ``[capabilities]`` choices: ``off`` tools are absent, ``on-demand`` ones are found through discovery.
    """
    if timeout is not None and not (math.isfinite(timeout) and timeout > 0):
        raise UsageError(detail=message("cli.exec.bad_timeout"))
    configured = configured_limits(workspace, base=RunLimits(warm_spare=False))
    # What a session lists in /capabilities, each issue with its code; the valid keys still apply.
    for issue in configured.loaded.issues:
        click.echo(message("cli.exec.config-issue", code=issue.code, issue=issue.message()), err=True)
    if configured.session.diagnostic is not None:
        click.echo(configured.session.diagnostic, err=True)
    limits = tighten_policy(configured, SandboxPolicy(policy) if policy is not None else None)
    limits = tighten_executor(configured, limits, executor)
    server = _mcp_server(tools, configured.loaded, workspace)
    tool_set = _tool_set(tools, workspace) if server is None else None
    code = _read_program(file)
    with planned_tools(
        workspace,
        tool_set.definitions if tool_set is not None else (),
        sources=sources or server is not None,
        only={server} if server is not None else None,
        progress=_progress,
    ) as planned:
        for note in planned.plan.notes:
            click.echo(message("cli.exec.source-problem", problem=note), err=True)
        for name in _off_servers(configured.loaded, workspace, sources or server is not None):
            click.echo(message("cli.exec.server-off", server=name), err=True)
        if tools is None and not planned.offered:
            click.echo(message("cli.exec.no-tools"), err=True)
        with _no_empty_state_dirs(workspace):
            return _run_planned(file, timeout, workspace, as_json, session, configured.loaded, limits, code, planned)


def _run_planned(
    file: str,
    timeout: float | None,
    workspace: Path,
    as_json: bool,
    session: Path | None,
    loaded: LoadedConfig,
    limits: RunLimits,
    code: str,
    planned: PlannedTools,
) -> int:
    arguments: dict[str, Any] = {"description": f"ptc-plus exec {file}", "code": code}
    if timeout is not None:
        arguments["timeout_s"] = timeout
    streaming = not as_json and sys.stdout.isatty()
    terminal = _Terminal() if streaming else None
    definitions = planned.offered
    discovery = _plan_discovery(planned) if definitions else None
    observer = terminal.write if terminal else None
    recovery: Recovery | None = None
    if session is None:
        result, interrupted = asyncio.run(
            _execute(workspace, definitions, limits, arguments, observer, discovery=discovery)
        )
    else:
        result, interrupted, recovery = _run_cell(
            session, loaded, workspace, definitions, limits, arguments, observer, discovery
        )
    shape = result_shape(result)
    # With durable replay off every cell is volatile and each invocation starts an empty kernel: say so.
    mode = "durable" if limits.durable_replay else "volatile"
    if as_json:
        extra = {"repl": recovery.to_json() | {"mode": mode}} if session is not None and recovery is not None else {}
        emit_json({"version": JSON_VERSION, **shape, **extra})
    else:
        _print_human(shape, result, terminal, limits.executor)
        if session is not None and not limits.durable_replay:
            click.echo(message("cli.exec.replay-off"), err=True)
        for hint in _off_hints(shape, planned):
            click.echo(hint, err=True)
        if recovery is not None and recovery.cold and (recovery.replayed or recovery.skipped):
            click.echo(
                message("cli.exec.recovered", kept=recovery.kept, replayed=recovery.replayed, skipped=recovery.skipped),
                err=True,
            )
    if interrupted:
        click.echo(message("cli.interrupted"), err=True)
        return EXIT_INTERRUPTED
    return 0 if shape["ok"] else 1


def _run_cell(
    session: Path,
    loaded: LoadedConfig,
    workspace: Path,
    tools: Sequence[ToolDefinition],
    limits: RunLimits,
    arguments: dict[str, Any],
    observer: OutputObserver | None,
    discovery: DiscoveryProvider | None = None,
) -> tuple[ToolResult, bool, Recovery | None]:
    """Run the program as the next cell of the kernel session in ``session``; a session directory that
    cannot be used, or one another invocation holds, is a usage error (exit 2) and nothing runs."""
    try:
        kernel = KernelSession.open(session, loaded, workspace)
        for issue in kernel.issues:
            click.echo(message("cli.exec.config-issue", code=issue.code, issue=issue.message()), err=True)
        with kernel.exclusive():
            cell_limits = attrs.evolve(limits, kernel=KernelMode.SESSION)
            return asyncio.run(_execute_cell(workspace, tools, cell_limits, arguments, observer, kernel, discovery))
    except (SessionDirRefused, SessionDirInWorkspace, SessionBusy) as refused:
        raise WrongInvocation(refused) from None  # exit 2 under the refusal's own code, not PTC-1001 around it


def _mcp_server(value: str | None, loaded: LoadedConfig, workspace: Path) -> str | None:
    """The server ``--tools mcp:NAME`` names (one configured and allowed here), ``None`` for other values.

    ``mcp:NAME`` is never read as ``module:factory``: it names a configured server, not a module.
    """
    if value is None or not value.startswith(MCP_PREFIX):
        return None
    name = value[len(MCP_PREFIX) :]
    chosen = mcp_servers(loaded, workspace)
    refused = next((r for r in chosen.refused if r.name == name), None)
    if refused is not None:
        raise WrongInvocation(refused.to_error())
    if name not in chosen.usable:
        known = ", ".join(sorted(chosen.usable)) or "-"
        raise UsageError(detail=message("cli.exec.mcp-unknown", name=name, known=known))
    return name


def _progress(line: str) -> None:
    click.echo(line, err=True)


def _off_servers(loaded: LoadedConfig, workspace: Path, sources: bool) -> list[str]:
    """The allowed servers whose unit ``mcp:<server>`` is ``off``: never started, their tools absent (ADR 0097)."""
    if not sources:
        return []
    usable = mcp_servers(loaded, workspace).usable
    return [name for name in sorted(usable) if loaded.config.disclosure_of(f"{MCP_PREFIX}{name}") is Disclosure.OFF]


def _off_hints(shape: dict[str, Any], planned: PlannedTools) -> list[str]:
    """For a run that failed on a tool name the plan holds as ``off``: that it is off in this plan, and how to
    turn it on (the program's own error only knows the name is not in its tools)."""
    error = shape["error"]
    if shape["ok"] or error is None:
        return []
    text = str(error["message"])
    hints: list[str] = []
    for entry in planned.plan.plan.entries:
        capability = planned.plan.catalog.get(entry.identity) if entry.disclosure is Disclosure.OFF else None
        if capability is not None and f"'{capability.name}'" in text:
            chosen = planned.plan.loaded.config.explicit_choice(entry.identity)
            decided_by = chosen[1] if chosen is not None else entry.identity  # the server's unit, or its own entry
            hints.append(message("cli.exec.tool-off", tool=capability.name, identity=decided_by))
    return hints


def _plan_discovery(planned: PlannedTools) -> DiscoveryProvider:
    """Discovery over the plan's effective set, as in any session: on-demand tools are found, ``off`` ones not."""
    snapshot = planned.plan.snapshot()

    def provider(agent: AgentRef) -> CatalogSnapshot:
        return snapshot

    return provider


@contextlib.contextmanager
def _no_empty_state_dirs(workspace: Path) -> Iterator[None]:
    """Remove the state directories the run created and left empty (the sandbox makes them to bind them
    read-only); a directory that existed before, or that holds anything now, stays."""
    before = {name for name in _STATE_DIRS if os.path.lexists(workspace / name)}
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            root = os.open(workspace, os.O_RDONLY | os.O_DIRECTORY)
            try:
                for name in _STATE_DIRS - before:
                    # rmdir beneath the workspace's descriptor: a link is never followed, a non-empty one stays.
                    with contextlib.suppress(OSError):
                        os.rmdir(name, dir_fd=root)
            finally:
                os.close(root)


def _tool_set(value: str | None, workspace: Path) -> ToolSet | None:
    """The tool set ``--tools`` names; says on stderr when it has no bodies."""
    if value is None:
        return None
    tool_set = read_tool_set(value, workspace)
    if not tool_set.implemented:
        click.echo(message("cli.exec.contracts-only", count=len(tool_set.definitions), name=value), err=True)
    return tool_set


def _read_program(file: str) -> str:
    try:
        if file != "-":
            return Path(file).read_text(encoding="utf-8")
        # The program itself never reads this stdin (its own is /dev/null): only exec waits on a terminal.
        if sys.stdin.isatty():
            click.echo(message("cli.exec.reading-terminal"), err=True)
        return sys.stdin.read()
    except (OSError, UnicodeDecodeError) as error:
        raise UsageError(detail=message("cli.exec.unreadable", path=file, detail=str(error))) from None


class _Terminal:
    """Shows the program's output as the runtime's ledger keeps it; remembers whether stdout ended a line."""

    def __init__(self) -> None:
        self.line_open = False
        self._broken = False
        # Standard error on a terminal is (nearly always) the same screen: a line it ends is ended.
        self._shared = sys.stderr.isatty()

    def write(self, stream: str, text: str) -> None:
        if self._broken:
            return
        target: TextIO = sys.stdout if stream in _STDOUT_STREAMS else sys.stderr
        try:
            target.write(text)
            target.flush()
        except (OSError, ValueError):
            self._broken = True  # the terminal went away; the run goes on and its result stays the same
            return
        if target is sys.stdout or self._shared:
            self.line_open = not text.endswith("\n")


async def _execute_cell(
    workspace: Path,
    tools: Sequence[ToolDefinition],
    limits: RunLimits,
    arguments: dict[str, Any],
    observer: OutputObserver | None,
    kernel: KernelSession,
    discovery: DiscoveryProvider | None = None,
) -> tuple[ToolResult, bool, Recovery | None]:
    """Like :func:`_execute`, as the next cell of ``kernel``; also what recovering the kernel took."""
    runtime = CodeRuntime(limits, owner_paths=(WORKSPACE_DIR,), observer=observer)
    result, interrupted = await _execute(
        workspace, tools, limits, arguments, observer, runtime, kernel.cell, discovery=discovery
    )
    return result, interrupted, runtime.recovery(kernel.key)


async def _execute(
    workspace: Path,
    tools: Sequence[ToolDefinition],
    limits: RunLimits,
    arguments: dict[str, Any],
    observer: OutputObserver | None = None,
    runtime: CodeRuntime | None = None,
    kernel_for: KernelFor | None = None,
    *,
    discovery: DiscoveryProvider | None = None,
) -> tuple[ToolResult, bool]:
    """The settled ``run_code`` result, and whether Ctrl-C cancelled it (``discovery``: default a snapshot of
    ``tools``)."""
    from ptc_plus.doors import Scratch, embedded

    runtime = runtime or CodeRuntime(limits, owner_paths=(WORKSPACE_DIR,), observer=observer)
    discovery = discovery if discovery is not None else discovery_for(tools)
    definition = run_code_definition(runtime=runtime, discovery=discovery, kernel_for=kernel_for)
    interrupted = False

    def interrupt() -> None:
        # Abort the run as the runtime aborts any (its process group is killed; the output so far is kept).
        nonlocal interrupted
        interrupted = True
        runtime.close_nowait()

    loop = asyncio.get_running_loop()
    with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):  # no signals off the main thread
        loop.add_signal_handler(signal.SIGINT, interrupt)
    try:
        try:
            async with embedded(
                workspace, tools=[*tools, definition], state=Scratch("ptc-exec-"), entry_points=False
            ) as host:
                session = await host.start_session(user_id="exec", title="ptc-plus exec")
                return await session.call_tool("run_code", arguments), interrupted
        finally:
            await runtime.aclose()
    finally:
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.remove_signal_handler(signal.SIGINT)


def discovery_for(tools: Sequence[ToolDefinition]) -> DiscoveryProvider | None:
    """A provider answering every caller from one snapshot of ``tools`` (none without tools)."""
    if not tools:
        return None
    snapshot = build_snapshot(build_catalog(tools=[tool.spec for tool in tools]))

    def provider(agent: AgentRef) -> CatalogSnapshot:
        return snapshot

    return provider


def result_shape(result: ToolResult) -> dict[str, Any]:
    """``{"ok", "value", "error", "logs", "calls", "notes"}`` from the host's settled ``run_code`` result.

    ``error`` is ``None`` or ``{"kind", "code", "message", "tool_name"?}`` (``code``: the outcome's stable
    ``PTC-21xx``, or the host's code when the run never started); ``--json`` adds ``"version"``. The one
    projection of a run's outcome (:class:`~ptc_plus.runtime.RunShape`); the traceback goes to standard error.
    """
    return RunShape.of_result(result).to_json(traceback=False)


def _print_human(shape: dict[str, Any], result: ToolResult, terminal: _Terminal | None, executor: ExecutorName) -> None:
    if terminal is None:  # streamed already when there is a terminal
        for entry in shape["logs"]:
            stream = sys.stdout if entry["stream"] in _STDOUT_STREAMS else sys.stderr
            stream.write(entry["text"])
    elif terminal.line_open:
        sys.stdout.write("\n")
    sys.stdout.flush()
    for note in shape["notes"]:
        click.echo(message("cli.exec.note", note=note), err=True)
    if shape["ok"]:
        click.echo(message("cli.exec.value", value=orjson.dumps(shape["value"]).decode("utf-8")))
        return
    error = shape["error"]
    traceback = result.error.data.get("traceback") if result.error is not None else None
    if traceback:
        sys.stderr.write(str(traceback))
    click.echo(message("cli.exec.error", kind=error["kind"], message=error["message"]), err=True)
    if error["kind"] == "sandbox-unavailable":
        # How to get the configured executor: the hint names what is missing, never a weaker way round it.
        click.echo(message(f"cli.exec.sandbox-hint.{executor}"), err=True)
