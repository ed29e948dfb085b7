"""``ptc-plus demo``: a complete scripted session on the embedded reference host."""

from __future__ import annotations

import asyncio
from pathlib import Path

import click

from ptc_plus.cli.invocation import ptc_command
from ptc_plus.cli.options import workspace_option
from ptc_plus.i18n import message


def command() -> click.Command:
    @ptc_command(help=message("cli.demo.help"), epilog=message("cli.demo.examples"))
    @workspace_option("cli.demo.workspace", default_cwd=False)
    @click.option("--verbose", is_flag=True, help=message("cli.demo.verbose"))
    def demo(workspace: Path | None, verbose: bool) -> int:
        # Imported here: building the CLI for any other command must not load the demo, the host and the meter.
        from ptc_plus.demo import View, run_demo
        from ptc_plus.evaluation.demo_bill import DemoBill

        # A workspace the demo refuses (ptc_plus.demo.errors) is a UsageError: exit 2 with this usage.
        return asyncio.run(run_demo(workspace, view=View.for_terminal(verbose=verbose), bill=DemoBill()))

    return demo
