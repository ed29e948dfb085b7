"""``ptc-plus config init|show|check``: the config files, made checkable (ADR 0062).

``check`` exits 1 on any problem and 0 when both files are clean, so CI can
run it; ``show`` prints the value in force for every key and where it came
from. Both read the same files a session in the workspace reads.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import click

from ptc_plus.cli.invocation import PtcGroup, ptc_command
from ptc_plus.cli.options import json_option, workspace_option
from ptc_plus.cli.output import JSON_VERSION, emit_json, on_terminal, paint, table
from ptc_plus.config import (
    ConfigIssue,
    ConfigReport,
    Scope,
    init_config,
    inspect_config,
    problem_line,
    toml_literal,
)
from ptc_plus.i18n import message


def init_command() -> click.Command:
    @ptc_command("init", help=message("cli.config.init.help"), epilog=message("cli.config.init.examples"))
    @workspace_option()
    @click.option("--user", "user_file", is_flag=True, help=message("cli.config.init.user"))
    @click.option("--force", is_flag=True, help=message("cli.config.init.force"))
    @json_option()
    def init(workspace: Path, user_file: bool, force: bool, as_json: bool) -> int:
        scope = Scope.USER if user_file else Scope.WORKSPACE
        path = init_config(scope, workspace=workspace, force=force)
        # The new file is clean, but the other one may not be: say so now rather than at the next session.
        problems = inspect_config(workspace).problems
        if as_json:
            document = {"version": JSON_VERSION, "scope": scope.value, "path": str(path)}
            emit_json({**document, "problems": [problem.to_json() for problem in problems]})
            return 0
        click.echo(message("config.init.wrote", path=str(path)))
        _warn(problems)
        click.echo(message("config.init.next"))
        return 0

    return init


def show_command() -> click.Command:
    @ptc_command("show", help=message("cli.config.show.help"), epilog=message("cli.config.show.examples"))
    @workspace_option()
    @json_option()
    def show(workspace: Path, as_json: bool) -> int:
        report = inspect_config(workspace)
        if as_json:
            emit_json({"version": JSON_VERSION, **report.show_json()})
            return 0
        if not on_terminal():
            for line in report.show_lines():
                click.echo(line)
            return 0
        _show_table(report)
        return 0

    return show


def _show_table(report: ConfigReport) -> None:
    for line in report.show_lines()[: len(report.files)]:
        click.echo(line)
    click.echo()
    rows = [
        [
            key.key,
            message("config.show.unset") if key.value is None else toml_literal(key.value),
            message(f"config.scope.{key.source}")
            if key.source != "default"
            else paint(message("config.scope.default"), dim=True),
        ]
        for key in report.keys
    ]
    headers = [
        message("config.show.header-key"),
        message("config.show.header-value"),
        message("config.show.header-source"),
    ]
    click.echo(table(headers, rows))
    _warn(report.problems)


def _warn(problems: Sequence[ConfigIssue]) -> None:
    """Each problem on standard error, with its code: the command still did its work."""
    for problem in problems:
        click.echo(paint(message("config.show.problem", problem=problem_line(problem)), fg="yellow"), err=True)


def check_command() -> click.Command:
    @ptc_command("check", help=message("cli.config.check.help"), epilog=message("cli.config.check.examples"))
    @workspace_option()
    @json_option()
    def check(workspace: Path, as_json: bool) -> int:
        report = inspect_config(workspace)
        if as_json:
            emit_json({"version": JSON_VERSION, **report.check_json()})
            return report.exit_code
        *problems, summary = report.check_lines()
        for line in problems:
            click.echo(paint(line, fg="red"))
        click.echo(paint(summary, bold=True) if report.problems else summary)
        return report.exit_code

    return check


def command() -> click.Command:
    group = PtcGroup("config", help=message("cli.config.help"), epilog=message("cli.config.examples"))
    for sub in (init_command(), show_command(), check_command()):
        group.add_command(sub)
    return group
