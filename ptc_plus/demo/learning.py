"""What the usage statistics of the demo's workspace say before a run: the line that shows the plan learning.

Each ``ptc-plus demo --workspace W`` run is one session family recorded in
``W``'s store when it settles. The line names how many runs were recorded and
how often they used the unit converter the scripted program always looks
up: once the workspace has ``min_samples`` runs, statistics decide instead
of the baseline and the converter's contract is in the catalog up front.
"""

from __future__ import annotations

from pathlib import Path

from hookspecs.reference.demo_tools import demo_tool_definitions
from ptc_plus.capabilities import build_catalog
from ptc_plus.config import load_config
from ptc_plus.i18n import message
from ptc_plus.statistics import schema_revision_of, workspace_store

LEARNED = "host:convert_units"
"""The on-demand tool every scripted run uses: the one whose disclosure the statistics change."""


def statistics_line(workspace: Path, temporary: bool, lang: str | None = None) -> str:
    """One line: the runs recorded in ``workspace`` and how many of them used :data:`LEARNED`."""
    settings = load_config(workspace).config.statistics
    if temporary:
        return message("demo.statistics.temporary", lang, min_samples=settings.min_samples)
    view = workspace_store(workspace).read()
    if view.status != "ok":
        if view.status == "missing" or view.problem is None:
            return message("demo.statistics.none", lang, path=str(workspace), min_samples=settings.min_samples)
        return message("demo.statistics.unreadable", lang, code=view.problem.code, problem=view.problem.message(lang))
    catalog = build_catalog(tools=[d.spec for d in demo_tool_definitions(workspace)])
    capability = catalog.get(LEARNED)
    if capability is None:  # the reference host no longer offers it: nothing to say about it
        return message("demo.statistics.none", lang, path=str(workspace), min_samples=settings.min_samples)
    found = view.stats(
        LEARNED,
        capability.revision,
        schema_revision=schema_revision_of(capability),
        window=settings.window,
        min_samples=settings.min_samples,
    )
    return message(
        "demo.statistics.recorded",
        lang,
        families=view.families(),
        tool=capability.name,
        used=found.used,
        available=found.available,
        min_samples=settings.min_samples,
        window=settings.window,
        decides=message(
            "demo.statistics.decide" if found.sufficient else "demo.statistics.wait",
            lang,
            min_samples=settings.min_samples,
        ),
    )
