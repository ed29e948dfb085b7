"""``ptc-plus mcp-serve``: serve PTC Plus to an MCP client on standard input and output (ADR 0073).

The client starts this command itself (Claude Code, Claude Desktop, any stdio
client); one process is one client connection and one session. Config problems
are reported on standard error (the client's log) and the valid keys still
apply, as in any session. ``--check`` opens the session as a client would find
it, prints what it would be offered (tools, prompts, instructions) and exits,
without speaking MCP.

Exit code: 0 the client disconnected (or the check ran), 1 the session could
not be opened, 2 usage error, 130 interrupted.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import click

from hookspecs import ToolDefinition
from ptc_plus.cli.invocation import ptc_command
from ptc_plus.cli.options import json_option, read_tool_set, tools_option, workspace_option
from ptc_plus.cli.output import JSON_VERSION, emit_json
from ptc_plus.doors import login_name
from ptc_plus.doors.mcp.serve_session import ServedSession, served
from ptc_plus.errors import UsageError
from ptc_plus.i18n import message
from ptc_plus.session import configured_limits


def command() -> click.Command:
    @ptc_command("mcp-serve", help=message("cli.mcp-serve.help"), epilog=message("cli.mcp-serve.examples"))
    @workspace_option()
    @tools_option("cli.mcp-serve.tools")
    @click.option("--check", is_flag=True, help=message("cli.mcp-serve.check"))
    @json_option("cli.mcp-serve.json")
    def mcp_serve(workspace: Path, tools: str | None, check: bool, as_json: bool) -> int:
        return run(workspace, tools, check, as_json)

    return mcp_serve


def run(workspace: Path, tools: str | None, check: bool, as_json: bool) -> int:
    """Check the invocation, report config problems, then serve (or check); returns the exit code."""
    if as_json and not check:
        raise UsageError(detail=message("cli.mcp-serve.json-needs-check"))
    definitions = read_tool_set(tools, workspace).definitions if tools is not None else ()
    configured = configured_limits(workspace)
    for issue in configured.loaded.issues:  # on stderr: the client's log, never the MCP wire
        click.echo(message("cli.exec.config-issue", code=issue.code, issue=issue.message()), err=True)
    user = login_name()
    printed = {message("ptc.report.config-issue", issue=issue.message()) for issue in configured.loaded.issues}

    def report(served: ServedSession) -> None:
        # Every source problem (a refused server with the trust command to run, one that did not start and
        # why) goes to stderr, the client's log: a client shows no /capabilities receipt by itself.
        for line in served.diagnostics():
            if line not in printed:
                click.echo(message("cli.mcp-serve.problem", problem=line), err=True)

    if check:
        offered = asyncio.run(_check(workspace, definitions, user, report))
        _print_check(offered, as_json)
        return 0
    if sys.stdin.isatty():
        click.echo(message("cli.mcp-serve.terminal"), err=True)
    from ptc_plus.doors.mcp.serve import serve_stdio  # the SDK's server, loaded when serving (ADR 0105)

    asyncio.run(serve_stdio(workspace, definitions, user_id=user, opened=report))
    return 0


async def _check(
    workspace: Path, tools: Sequence[ToolDefinition], user: str, report: Callable[[ServedSession], None]
) -> dict[str, Any]:
    """What a client connecting now would be offered, read from a session opened as for it."""
    from ptc_plus.doors.mcp.serve import PROMPT_REFRESH, PROMPT_SHOW

    async with served(workspace, tools, user_id=user, scratch="ptc-mcp-check-") as session:
        report(session)
        return {
            "tools": [{"name": t.name, "description": t.description} for t in session.tools()],
            "prompts": [PROMPT_SHOW, PROMPT_REFRESH],
            "instructions": session.instructions,
        }


def _print_check(offered: dict[str, Any], as_json: bool) -> None:
    if as_json:
        emit_json({"version": JSON_VERSION, **offered})
        return
    names = ", ".join(tool["name"] for tool in offered["tools"])
    click.echo(message("cli.mcp-serve.check-tools", names=names or "-"))
    click.echo(message("cli.mcp-serve.check-prompts", names=", ".join(offered["prompts"])))
    click.echo(message("cli.mcp-serve.check-instructions", count=len(offered["instructions"])))
    if offered["instructions"]:
        click.echo(offered["instructions"])
