"""``ptc-plus settings --check``: build the page once, as its first request would, without serving it.

For a script (or a test that must not wait on a server) to learn whether the page can be built for a
workspace and what it would report: the config's problems go to standard error with their codes, as
``ptc-plus config show`` prints them, and the exit status says whether there were any.
"""

from __future__ import annotations

from pathlib import Path

import click

from hookspecs.i18n import current_locale
from ptc_plus.cli.settings_page.page import render
from ptc_plus.cli.settings_page.view import gather
from ptc_plus.config import problem_line
from ptc_plus.i18n import message


def check_page(workspace: Path) -> int:
    """Render the page for ``workspace`` once; print its problems and a summary; 1 with problems, else 0."""
    lang = current_locale()
    view = gather(workspace, lang)
    render(view, lang, "", form_token="")  # what the first request would render, tokens aside
    for problem in view.problems:
        click.echo(message("config.show.problem", problem=problem_line(problem)), err=True)
    click.echo(message("cli.settings.checked", plan=len(view.plan), problems=len(view.problems)))
    return 1 if view.problems else 0
