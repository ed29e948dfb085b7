"""Options shared by several commands, so each means the same everywhere."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from ptc_plus.cli.errors import WorkspaceNotADirectory
from ptc_plus.cli.invocation import InvocationError, usage_errors
from ptc_plus.i18n import message
from ptc_plus.sdk import InvalidToolsFile, ToolSet, ToolSetUnavailable, load_tool_set

F = TypeVar("F", bound=Callable[..., Any])


def _existing_directory(path: Path, ctx: click.Context) -> Path:
    if not path.is_dir():
        # Never create it: a typo must not leave /nope/.ptc-plus/config.toml behind.
        why = message("cli.workspace.not-dir" if path.exists() else "cli.workspace.missing")
        raise InvocationError(WorkspaceNotADirectory(path=str(path), why=why), ctx)
    return path.resolve()


def _workspace_or_cwd(ctx: click.Context, param: click.Parameter, value: str | None) -> Path:
    return _existing_directory(Path(value) if value is not None else Path.cwd(), ctx)


def _workspace_or_none(ctx: click.Context, param: click.Parameter, value: str | None) -> Path | None:
    return None if value is None else _existing_directory(Path(value), ctx)


def workspace_option(help_key: str = "cli.option.workspace", *, default_cwd: bool = True) -> Callable[[F], F]:
    """``--workspace DIR``: an existing directory, resolved; when omitted, the current directory
    (``default_cwd``) or ``None`` (the command chooses, e.g. the demo's temporary directory)."""
    return click.option(
        "--workspace",
        metavar="DIR",
        default=None,
        callback=_workspace_or_cwd if default_cwd else _workspace_or_none,
        help=message(help_key),
    )


def json_option(help_key: str = "cli.option.json") -> Callable[[F], F]:
    """``--json``: print one versioned JSON object (:mod:`ptc_plus.cli.output`)."""
    return click.option("--json", "as_json", is_flag=True, help=message(help_key))


def integer(minimum: int | None = None) -> click.IntRange:
    """An integer option type (at least ``minimum``) that names itself in the run's locale in error messages.

    click's own types carry an English name (``'x' is not a valid integer``) that no catalog translates.
    """
    kind = click.IntRange(min=minimum)
    kind.name = message("cli.type.integer")
    return kind


TOOLS_METAVAR = "demo|FILE.json|MODULE:FACTORY"


def tools_option(help_key: str, *, required: bool = False) -> Callable[[F], F]:
    """``--tools``: a tool set as every command reads it (:func:`read_tool_set`); the value stays a string."""
    # No explicit default: click treats default=None as a value, which would defeat ``required``.
    return click.option("--tools", required=required, metavar=TOOLS_METAVAR, help=message(help_key))


def read_tool_set(value: str, workspace: Path) -> ToolSet:
    """The tool set ``--tools`` names (:func:`ptc_plus.sdk.load_tool_set`); one it cannot load is a usage error."""
    with usage_errors(InvalidToolsFile, ToolSetUnavailable):
        return load_tool_set(value, workspace)
