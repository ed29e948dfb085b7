"""``ptc-plus plugins``: the plugins a reference host loads, in load order, with their hooks."""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path
from typing import Any

import click
import pluggy

from hookspecs.reference import HostBuiltins
from ptc_plus.cli.invocation import ptc_command
from ptc_plus.cli.options import json_option
from ptc_plus.cli.output import JSON_VERSION, emit_json, on_terminal, paint, table
from ptc_plus.doors import embedded
from ptc_plus.i18n import message


def command() -> click.Command:
    @ptc_command(help=message("cli.plugins.help"), epilog=message("cli.plugins.examples"))
    @json_option("cli.plugins.json")
    def plugins(as_json: bool) -> int:
        rows = _rows()
        if as_json:
            emit_json({"version": JSON_VERSION, "plugins": rows})
            return 0
        if on_terminal():
            click.echo(_table(rows))
            return 0
        for row in rows:
            if row["blocked"]:
                click.echo(f"{paint(row['name'], bold=True)} ({message('cli.plugins.blocked')})")
                continue
            origin = message("cli.plugins.builtin") if row["builtin"] else row["distribution"]
            click.echo(f"{paint(row['name'], bold=True)} ({origin})")
            for hook in row["hooks"]:
                click.echo(f"    {hook}")
        return 0

    return plugins


def _origin(row: dict[str, Any]) -> str:
    if row["blocked"]:
        return message("cli.plugins.blocked")
    return message("cli.plugins.builtin") if row["builtin"] else str(row["distribution"])


def _table(rows: list[dict[str, Any]]) -> str:
    headers = [message("cli.column.plugin"), message("cli.column.origin"), message("cli.column.hooks")]
    cells = [
        [
            paint(row["name"], dim=True) if row["blocked"] else paint(row["name"], bold=True),
            paint(_origin(row), fg="yellow") if row["blocked"] else _origin(row),
            ", ".join(hook.removeprefix("agent_host_") for hook in row["hooks"]),
        ]
        for row in rows
    ]
    return table(headers, cells)


def _rows() -> list[dict[str, Any]]:
    # The same loading path every front door's host uses, with its built-ins first.
    pm = asyncio.run(_loaded())
    rows: list[dict[str, Any]] = []
    for name, plugin in pm.list_name_plugin():
        if plugin is None:  # named in the blocklist: registered as blocked, never loaded
            rows.append({"name": name, "builtin": False, "distribution": "", "hooks": [], "blocked": True})
            continue
        hooks = sorted(h.name for h in pm.get_hookcallers(plugin) or [])
        dist = next((d.project_name for p, d in pm.list_plugin_distinfo() if p is plugin), "")
        rows.append(
            {
                "name": name,
                "builtin": isinstance(plugin, HostBuiltins),
                "distribution": dist,
                "hooks": hooks,
                "blocked": False,
            }
        )
    return rows


async def _loaded() -> pluggy.PluginManager:
    """The plugin manager of a host embedded in an empty workspace (opened and closed: no session starts)."""
    with tempfile.TemporaryDirectory() as tmp:
        async with embedded(Path(tmp)) as host:
            return host.facade.pm
