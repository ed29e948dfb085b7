"""The ``ptc-plus`` root group, whose commands are imported when they are looked up (issue 32, ADR 0115).

A run imports only the module of the command it runs: ``--help`` lists the commands from their
``cli.<command>.help`` messages without importing one. :func:`build_cli` builds them all, for what
walks every command (the tests, ``llm``'s mounted commands).
"""

from __future__ import annotations

import importlib

import click

from ptc_plus import __version__
from ptc_plus.cli import COMMANDS
from ptc_plus.cli.invocation import PtcGroup
from ptc_plus.i18n import message


class LazyGroup(PtcGroup):
    """The root group: a command's module is imported when the command is looked up, not before.

    Its help lists the commands without importing them: a command not built yet is listed from a
    stand-in carrying the same help message (``cli.<command>.help``), shortened by click as always.
    """

    def list_commands(self, ctx: click.Context) -> list[str]:
        return [_command_name(module) for module in COMMANDS]

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        found = self.commands.get(cmd_name)
        if found is None and cmd_name in self.list_commands(ctx):
            found = _load(self, cmd_name.replace("-", "_"))
        return found

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        listed = {
            name: self.commands.get(name) or click.Command(name, help=message(f"cli.{name}.help"))
            for name in self.list_commands(ctx)
        }
        PtcGroup.format_commands(PtcGroup(commands=listed), ctx, formatter)


def _command_name(module: str) -> str:
    return module.replace("_", "-")  # module mcp_serve: command mcp-serve


def _load(group: click.Group, module: str) -> click.Command:
    command: click.Command = importlib.import_module(f"ptc_plus.cli.{module}").command()
    group.add_command(command, _command_name(module))
    return command


def build_cli() -> click.Group:
    """The ``ptc-plus`` group with every subcommand built, help texts in the current locale."""
    cli = root()
    for name in COMMANDS:
        _load(cli, name)
    return cli


def root() -> click.Group:
    """The ``ptc-plus`` group, each subcommand built when it is first looked up."""

    @click.group(
        cls=LazyGroup,
        help=message("cli.help"),
        epilog=message("cli.epilog"),
        context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
    )
    @click.version_option(__version__, "--version", prog_name="ptc-plus", message="%(prog)s %(version)s")
    def cli() -> None:
        pass

    return cli
