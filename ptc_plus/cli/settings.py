"""``ptc-plus settings``: serve the settings and inspection page for a workspace (issue 34, ADR 0126).

Prints the page's address (with its token) and opens it in a browser when one is available and
``--no-open`` is not given; serves until Ctrl-C, which stops it cleanly (exit 0, not the 130 of an
interrupted command: Ctrl-C is how this one ends). ``--check`` builds the page once, as its first request
would, prints the config's problems and exits (1 with problems, else 0) without serving, as
``ptc-plus mcp-serve --check`` does for its session.
"""

from __future__ import annotations

import contextlib
import webbrowser
from pathlib import Path

import click

from ptc_plus.cli.errors import SettingsPortUnavailable
from ptc_plus.cli.invocation import ptc_command
from ptc_plus.cli.options import workspace_option
from ptc_plus.cli.settings_page import SettingsServer, bind_local, check_page
from ptc_plus.i18n import message


def command() -> click.Command:
    @ptc_command("settings", help=message("cli.settings.help"), epilog=message("cli.settings.examples"))
    @workspace_option()
    @click.option("--port", type=click.IntRange(0, 65535), default=0, metavar="N", help=message("cli.settings.port"))
    @click.option("--no-open", is_flag=True, help=message("cli.settings.no-open"))
    @click.option("--check", is_flag=True, help=message("cli.settings.check-option"))
    def settings(workspace: Path, port: int, no_open: bool, check: bool) -> int:
        if check:
            return check_page(workspace)
        try:
            sock = bind_local(port)
        except OSError as error:
            raise SettingsPortUnavailable(port=port, why=error.strerror or str(error)) from None
        server = SettingsServer(workspace=workspace, sock=sock)
        # Ctrl-C is how this command ends, so it is a clean stop (exit 0), whether it arrives while uvicorn
        # serves (uvicorn shuts down, then raises it again) or just before uvicorn took the signal over.
        with sock, contextlib.suppress(KeyboardInterrupt):
            click.echo(message("cli.settings.serving", url=server.url))
            if not no_open:
                _open(server.url)
            server.run()
        click.echo(message("cli.settings.stopped"))
        return 0

    return settings


def _open(url: str) -> None:
    """Open ``url`` in the user's browser when there is one; without one, the printed address suffices."""
    try:
        opened = webbrowser.open(url)
    except webbrowser.Error:
        opened = False
    if not opened:
        click.echo(message("cli.settings.no-browser"))
