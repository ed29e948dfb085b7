"""``ptc-plus completion [bash|zsh|fish]``: print click's shell completion script for ``ptc-plus``.

The script asks the installed ``ptc-plus`` for completions at each <Tab>
(``_PTC_PLUS_COMPLETE=<shell>_complete``), so it never goes stale when the
commands change; it only has to be installed once.
"""

from __future__ import annotations

import click
from click.shell_completion import get_completion_class

from ptc_plus.cli.invocation import ptc_command
from ptc_plus.i18n import message

PROG_NAME = "ptc-plus"
COMPLETE_VAR = "_PTC_PLUS_COMPLETE"
"""The variable click's ``main`` reads (``_{PROG_NAME}_COMPLETE``, dashes as underscores, upper case)."""

SHELLS = ("bash", "zsh", "fish")


def command() -> click.Command:
    @ptc_command(help=message("cli.completion.help"), epilog=message("cli.completion.examples"))
    @click.argument("shell", type=click.Choice(SHELLS), default="bash", required=False)
    @click.pass_context
    def completion(ctx: click.Context, shell: str) -> int:
        shell_class = get_completion_class(shell)
        assert shell_class is not None  # click registers all of SHELLS
        script = shell_class(ctx.find_root().command, {}, PROG_NAME, COMPLETE_VAR).source()
        click.echo(script)
        return 0

    return completion
