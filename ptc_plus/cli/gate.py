"""``ptc-plus gate``: evaluate the deployment gate for one user, toolset list and title."""

from __future__ import annotations

import os
from pathlib import Path

import click

from ptc_plus.cli.invocation import ptc_command
from ptc_plus.cli.options import json_option, workspace_option
from ptc_plus.cli.output import JSON_VERSION, emit_json, paint
from ptc_plus.config import load_config
from ptc_plus.gate import evaluate_gate, parse_list, resolve_gate_settings
from ptc_plus.i18n import message


def command() -> click.Command:
    @ptc_command(help=message("cli.gate.help"), epilog=message("cli.gate.examples"))
    @click.option("--user", required=True, help=message("cli.gate.user"))
    @click.option("--toolsets", default="", metavar="A,B", help=message("cli.gate.toolsets"))
    @click.option("--title", default=None, help=message("cli.gate.title"))
    @workspace_option("cli.gate.workspace")
    @json_option("cli.gate.json")
    def gate(user: str, toolsets: str, title: str | None, workspace: Path, as_json: bool) -> int:
        """Print the decision; exit 0 whatever it is (a refusal is an answer, not a failure)."""
        loaded = load_config(workspace)
        settings = resolve_gate_settings(os.environ, loaded)
        decision = evaluate_gate(settings, user_id=user, toolsets=sorted(parse_list(toolsets) or ()), title=title)
        if as_json:
            emit_json({"version": JSON_VERSION, **decision.to_json()})
            return 0
        reason = message(f"gate.reason.{decision.reason}")
        key = "gate.enabled" if decision.enabled else "gate.disabled"
        click.echo(
            paint(message(key, stage=str(decision.stage), reason=reason), fg="green" if decision.enabled else "red")
        )
        click.echo(message("gate.debug-run", value="true" if decision.debug_run else "false"))
        for warning in decision.warnings:
            click.echo(paint(message("gate.warning", text=warning.render()), fg="yellow"))
        return 0

    return gate
