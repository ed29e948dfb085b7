"""``ptc-plus mcp add|list|remove|trust``: the MCP servers PTC Plus uses as capability sources (ADR 0071).

``add`` and ``remove`` edit ``[mcp.servers.<name>]`` in the workspace file
(``--user``: the user file) like ``capabilities set`` edits choices: atomic,
comments kept. A server the person adds to a workspace file with ``add`` is
theirs, so ``add`` also records their consent for it in the user file; a
server that arrives with a repository's file waits for ``trust``, which shows
the exact program before recording consent for this workspace and this
definition. ``list`` shows every configured server, whether it runs here, and
the age of the ``tools/list`` snapshot plans use for it (ADR 0097); ``--check``
starts each allowed server, which files a new snapshot.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
import click

from ptc_plus.adapters.mcp import SnapshotUnreadable, age_text, check_servers, default_store, server_key
from ptc_plus.cli.capabilities_plan import report_issues
from ptc_plus.cli.invocation import PtcCommand, PtcGroup, ptc_command, usage_errors
from ptc_plus.cli.options import json_option, workspace_option
from ptc_plus.cli.output import JSON_VERSION, emit_json, on_terminal, paint, table
from ptc_plus.config import (
    LoadedConfig,
    McpEnvInvalid,
    McpServer,
    McpServerNameInvalid,
    McpServers,
    McpServerUnknown,
    Scope,
    add_server,
    check_server_name,
    fingerprint,
    load_config,
    mcp_servers,
    record_consent,
    remove_server,
    require_readable,
    user_config_file,
)
from ptc_plus.errors import PtcError
from ptc_plus.i18n import message
from ptc_plus.spelling import closest

USABLE = "usable"
"""The status of a server that ``--check`` started here (the refused ones carry their refusal)."""
CONFIGURED = "configured"
"""The status of a server allowed to run here that no ``--check`` started (nothing was run to list)."""
UNAVAILABLE = "unavailable"
"""The status of a server allowed to run here that ``--check`` could not start (the reason says why)."""


def _env_pairs(values: Sequence[str]) -> dict[str, str]:
    env: dict[str, str] = {}
    for value in values:
        key, equals, text = value.partition("=")
        if not equals or not key:
            raise McpEnvInvalid(value=value)
        env[key] = text
    return env


class _AddCommand(PtcCommand):
    """``mcp add``, whose unknown option most often belongs to the server's command typed without ``--``."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except click.NoSuchOption as error:
            if "--" in args:
                raise
            hint = message("cli.mcp.add.missing-separator", detail=error.format_message())
            raise click.UsageError(hint, ctx) from None


def add_command() -> click.Command:
    @click.command("add", cls=_AddCommand, help=message("cli.mcp.add.help"), epilog=message("cli.mcp.add.examples"))
    @click.argument("name")
    @click.argument("command_line", metavar="-- COMMAND [ARGS]...", nargs=-1, required=True)
    @click.option("--env", "env", multiple=True, metavar="KEY=VALUE", help=message("cli.mcp.add.env"))
    @click.option("--cwd", default=None, metavar="DIR", help=message("cli.mcp.add.cwd"))
    @click.option(
        "--timeout",
        type=click.FloatRange(min=0, min_open=True),
        default=None,
        metavar="SECONDS",
        help=message("cli.mcp.add.timeout"),
    )
    @click.option("--user", "user_scope", is_flag=True, help=message("cli.mcp.add.user"))
    @workspace_option()
    @json_option("cli.mcp.add.json")
    def add(
        name: str,
        command_line: tuple[str, ...],
        env: tuple[str, ...],
        cwd: str | None,
        timeout: float | None,
        user_scope: bool,
        workspace: Path,
        as_json: bool,
    ) -> int:
        with usage_errors(McpEnvInvalid, McpServerNameInvalid):
            check_server_name(name)
            variables = _env_pairs(env)
        program, *args = command_line
        server = McpServer(command=program, args=tuple(args), env=variables, cwd=cwd)
        if timeout is not None:
            server = attrs.evolve(server, timeout_s=timeout)
        scope = Scope.USER if user_scope else Scope.WORKSPACE
        user_file = user_config_file()
        if scope is Scope.WORKSPACE:
            # The consent goes to the user file after the edit: an unusable user file must stop us before it.
            require_readable(user_file)
        edit = add_server(scope, name, server, workspace=workspace, user_file=user_file)
        consent = None
        if scope is Scope.WORKSPACE:
            # The person typed this definition: it is theirs, so it runs here without a separate ``trust``.
            # Consent is for the definition in force, which the user file could still complete (``env``).
            effective = load_config(workspace).config.mcp.servers.get(name, server)
            consent = record_consent(user_file, workspace, name, effective)
        loaded = load_config(workspace)
        if as_json:
            document: dict[str, Any] = {"version": JSON_VERSION, "name": name, "scope": scope.value}
            document |= {"file": str(edit.file), "changed": edit.changed, "server": _definition(server)}
            document["consent_file"] = str(consent.file) if consent is not None else None
            emit_json({**document, "issues": [issue.message("en") for issue in loaded.issues]})
            return 0
        report_issues(loaded)
        key = "cli.mcp.add.added" if edit.changed else "cli.mcp.add.unchanged"
        click.echo(message(key, name=name, file=str(edit.file), command=_command_text(server)))
        if consent is not None and consent.changed:
            click.echo(message("cli.mcp.add.consented", file=str(consent.file), workspace=str(workspace)))
        return 0

    return add


def list_command() -> click.Command:
    @ptc_command("list", help=message("cli.mcp.list.help"), epilog=message("cli.mcp.list.examples"))
    @click.option("--check", is_flag=True, help=message("cli.mcp.list.check"))
    @workspace_option()
    @json_option("cli.mcp.list.json")
    def list_(check: bool, workspace: Path, as_json: bool) -> int:
        loaded = load_config(workspace)
        servers = mcp_servers(loaded, workspace)
        checked = check_servers(loaded, workspace, progress=_progress) if check else None
        rows = _rows(loaded, servers, checked, workspace)
        if as_json:
            document = {"version": JSON_VERSION, "workspace": str(workspace), "servers": rows}
            emit_json({**document, "issues": [issue.message("en") for issue in loaded.issues]})
            return 0
        report_issues(loaded)
        if not rows:
            click.echo(message("cli.mcp.list.none"))
            return 0
        if on_terminal():
            headers = [message("cli.mcp.column.name"), message("cli.mcp.column.scope")]
            headers += [message("cli.mcp.column.status"), message("cli.mcp.column.command")]
            cells = [
                [paint(row["name"], bold=True), row["scope"], _status_cell(row), _command_text_of(row)] for row in rows
            ]
            click.echo(table(headers, cells))
        else:
            for row in rows:
                click.echo(f"{row['name']}\t{row['scope']}\t{row['status']}\t{_command_text_of(row)}")
        for row in rows:
            if row["reason"]:
                click.echo(paint(message("cli.mcp.list.why", name=row["name"], reason=row["reason"]), dim=True))
        for row in rows:
            if row["status"] not in (USABLE, CONFIGURED, UNAVAILABLE):
                continue  # refused here: it never starts, so no snapshot speaks for it
            click.echo(paint(_listed_line(row), dim=True))
        return 0

    return list_


def _progress(line: str) -> None:
    click.echo(line, err=True)


def _listed_line(row: dict[str, Any]) -> str:
    """When the server's tools were last listed (its snapshot), or why there is none to plan from."""
    snapshot = row["snapshot"]
    if row["snapshot_problem"]:
        return message("cli.mcp.list.why", name=row["name"], reason=row["snapshot_problem"])
    if snapshot is None:
        return message("cli.mcp.list.never-listed", name=row["name"])
    age = age_text(float(snapshot["age_s"]))
    return message(
        "cli.mcp.list.listed", name=row["name"], taken_at=snapshot["taken"], age=age, tools=snapshot["tools"]
    )


def _snapshot_fields(name: str, server: McpServer, workspace: Path, from_workspace: bool) -> dict[str, Any]:
    """``snapshot`` (when the definition's tools were last listed, ``None``: never) and ``snapshot_problem``."""
    key = server_key(name, server, workspace, from_workspace=from_workspace)
    try:
        found = default_store().load(key.digest(), name)
    except SnapshotUnreadable as unreadable:
        return {"snapshot": None, "snapshot_problem": unreadable.message()}
    if found is None:
        return {"snapshot": None, "snapshot_problem": None}
    described = {"taken_at": found.taken_at, "taken": found.taken_text(), "age_s": round(found.age_s(), 3)}
    return {"snapshot": {**described, "tools": len(found.tools)}, "snapshot_problem": None}


def _status_cell(row: dict[str, Any]) -> str:
    status = str(row["status"])
    if status == CONFIGURED:
        return status
    return paint(status, fg="green") if status == USABLE else paint(status, fg="yellow")


def _rows(
    loaded: LoadedConfig,
    servers: McpServers,
    checked: Mapping[str, PtcError | None] | None = None,
    workspace: Path | None = None,
) -> list[dict[str, Any]]:
    refused = {entry.name: entry for entry in servers.refused}
    rows: list[dict[str, Any]] = []
    for name, server in sorted(loaded.config.mcp.servers.items()):
        refusal = refused.get(name)
        failure = checked.get(name) if checked is not None else None
        problem: PtcError | None = refusal.to_error() if refusal is not None else failure
        if refusal is not None:
            status = str(refusal.reason)
        elif checked is None or name not in checked:
            status = CONFIGURED
        else:
            status = UNAVAILABLE if failure is not None else USABLE
        rows.append(
            {
                "name": name,
                "scope": (Scope.WORKSPACE if name in servers.workspace_servers else Scope.USER).value,
                "file": refusal.file if refusal is not None else _file_of(loaded, name),
                "status": status,
                "code": problem.code if problem is not None else None,
                "reason": problem.message() if problem is not None else None,
                "fingerprint": fingerprint(server),
                **_definition(server),
                **(
                    _snapshot_fields(name, server, workspace, name in servers.workspace_servers)
                    if workspace is not None and refusal is None
                    else {"snapshot": None, "snapshot_problem": None}
                ),
            }
        )
    return rows


def _file_of(loaded: LoadedConfig, name: str) -> str:
    return next((file for key, file in loaded.origins.items() if key.startswith(f"mcp.servers.{name}.")), "")


def _definition(server: McpServer) -> dict[str, Any]:
    return {
        "command": server.command,
        "args": list(server.args),
        "env": dict(server.env),
        "cwd": server.cwd,
        "timeout_s": server.timeout_s,
        "enabled": server.enabled,
    }


def _command_text(server: McpServer) -> str:
    return _command_text_of(_definition(server))


def _command_text_of(row: dict[str, Any]) -> str:
    env = [f"{key}={shlex.quote(value)}" for key, value in row["env"].items()]
    return " ".join([*env, shlex.quote(row["command"]), *(shlex.quote(arg) for arg in row["args"])])


def remove_command() -> click.Command:
    @ptc_command("remove", help=message("cli.mcp.remove.help"), epilog=message("cli.mcp.remove.examples"))
    @click.argument("name")
    @click.option("--user", "user_scope", is_flag=True, help=message("cli.mcp.remove.user"))
    @workspace_option()
    @json_option("cli.mcp.remove.json")
    def remove(name: str, user_scope: bool, workspace: Path, as_json: bool) -> int:
        scope = Scope.USER if user_scope else Scope.WORKSPACE
        with usage_errors(McpServerNameInvalid):
            check_server_name(name)
        edit = remove_server(scope, name, workspace=workspace, user_file=user_config_file())
        loaded = load_config(workspace)
        still = name in loaded.config.mcp.servers
        if as_json:
            document = {"version": JSON_VERSION, "name": name, "scope": scope.value, "file": str(edit.file)}
            document |= {"changed": edit.changed, "still_configured": still}
            emit_json({**document, "issues": [issue.message("en") for issue in loaded.issues]})
            return 0
        report_issues(loaded)
        click.echo(message("cli.mcp.remove.removed", name=name, file=str(edit.file)))
        if still:
            click.echo(message("cli.mcp.remove.still", name=name), err=True)
        return 0

    return remove


def trust_command() -> click.Command:
    @ptc_command("trust", help=message("cli.mcp.trust.help"), epilog=message("cli.mcp.trust.examples"))
    @click.argument("name")
    @workspace_option()
    @json_option("cli.mcp.trust.json")
    def trust(name: str, workspace: Path, as_json: bool) -> int:
        with usage_errors(McpServerNameInvalid):
            check_server_name(name)
        loaded = load_config(workspace)
        server = loaded.config.mcp.servers.get(name)
        if server is None:
            file = ", ".join(loaded.files) or str(user_config_file())
            suggestion = closest(name, list(loaded.config.mcp.servers))
            raise McpServerUnknown(name=name, file=file, **({"suggestion": suggestion} if suggestion else {}))
        needed = name in mcp_servers(loaded, workspace).workspace_servers
        edit = record_consent(user_config_file(), workspace, name, server) if needed else None
        if as_json:
            document: dict[str, Any] = {"version": JSON_VERSION, "name": name, "workspace": str(workspace)}
            document |= {"needed": needed, "changed": edit is not None and edit.changed}
            document |= {"file": str(edit.file) if edit is not None else None, "fingerprint": fingerprint(server)}
            emit_json({**document, "server": _definition(server)})
            return 0
        if not needed:
            click.echo(message("cli.mcp.trust.not-needed", name=name))
            return 0
        assert edit is not None
        click.echo(message("cli.mcp.trust.program", name=name, command=_command_text(server)))
        key = "cli.mcp.trust.recorded" if edit.changed else "cli.mcp.trust.unchanged"
        click.echo(message(key, name=name, workspace=str(workspace), file=str(edit.file)))
        return 0

    return trust


def command() -> click.Command:
    group = PtcGroup("mcp", help=message("cli.mcp.help"), epilog=message("cli.mcp.examples"))
    for sub in (add_command(), list_command(), remove_command(), trust_command()):
        group.add_command(sub)
    return group
