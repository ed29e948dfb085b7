"""``ptc-plus capabilities <sub>``: the workspace's capabilities as a new session would get them.

``search`` answers from the effective set of the plan a new session in the
workspace would get (the same code path as ``plan``,
:mod:`ptc_plus.cli.workspace_plan`): ``off`` members are never found, as in
a session's own ``capabilities.search``. ``plan`` and ``set`` live in
:mod:`ptc_plus.cli.capabilities_plan`.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import click

from ptc_plus import discovery
from ptc_plus.cli.capabilities_plan import plan_command, report_issues, set_command
from ptc_plus.cli.invocation import PtcGroup, ptc_command, usage_errors
from ptc_plus.cli.options import integer, json_option, tools_option, workspace_option
from ptc_plus.cli.output import JSON_VERSION, emit_json, on_terminal, paint, table
from ptc_plus.cli.workspace_plan import new_session_plan, tools_catalog
from ptc_plus.discovery import CatalogSnapshot, InvalidBudget, InvalidDiscoveryArgument
from ptc_plus.i18n import message


def search_command() -> click.Command:
    @ptc_command(help=message("cli.capabilities.search.help"), epilog=message("cli.capabilities.search.examples"))
    @click.argument("query", nargs=-1, required=True)
    @tools_option("cli.capabilities.search.tools")
    @workspace_option()
    @click.option(
        "--limit",
        type=integer(1),
        default=10,
        show_default=True,
        metavar="N",
        help=message("cli.capabilities.search.limit"),
    )
    @click.option(
        "--budget", type=integer(1), default=None, metavar="N", help=message("cli.capabilities.search.budget")
    )
    @click.option("--explain", is_flag=True, help=message("cli.capabilities.search.explain"))
    @json_option("cli.capabilities.search.json")
    def search(
        query: tuple[str, ...],
        tools: str | None,
        workspace: Path,
        limit: int,
        budget: int | None,
        explain: bool,
        as_json: bool,
    ) -> int:
        computed = new_session_plan(workspace, tools_catalog(tools, workspace))
        snapshot = computed.snapshot()
        # One QUERY is the single-string search; several are phrasings of one need, fused (ADR 0104).
        asked: str | list[str] = query[0] if len(query) == 1 else list(query)
        with usage_errors(InvalidDiscoveryArgument, InvalidBudget):
            result = discovery.search(snapshot, asked, budget=budget, limit=limit)
        reasons: dict[str, Any] = {}
        for phrasing in query if explain else ():
            for identity, why in discovery.explain(snapshot, phrasing, limit=limit).items():
                reasons.setdefault(identity, why)  # the first phrasing that ranked it explains it
        if as_json:
            issues = [issue.message("en") for issue in computed.loaded.issues]
            extra = {"explain": list(reasons.values())} if explain else {}
            emit_json({**result, **extra, "issues": issues, "version": JSON_VERSION})
            return 0
        report_issues(computed.loaded)
        print_search(snapshot, asked, result, reasons)
        return 0

    return search


def print_search(
    snapshot: CatalogSnapshot,
    query: str | list[str],
    result: Mapping[str, Any],
    reasons: Mapping[str, Any] | None = None,
) -> None:
    """The human list of a :func:`~ptc_plus.discovery.api.search` answer (``ptc-plus capabilities
    search``, ``llm capabilities search``): a table on a terminal, numbered rows otherwise, and with
    ``reasons`` (:func:`~ptc_plus.discovery.api.explain`) why each matched."""
    reasons = reasons or {}
    ranked = sorted([*result["expanded"], *result["not_expanded"]], key=lambda m: (-m["score"], m["identity"]))
    if not ranked:
        click.echo(message("cli.capabilities.search.none", query=repr(query)))
        return
    if not result["good_match"]:
        click.echo(message("cli.capabilities.search.no-good-match", query=repr(query)))
    if on_terminal() and not reasons:
        click.echo(_search_table(ranked, snapshot, result["unit"]))
        return
    gloss = next((why["gloss"]["text"] for why in reasons.values() if why["gloss"]), None)
    if gloss:
        click.echo(message("cli.capabilities.search.explain-gloss", gloss=gloss))
    for rank, match in enumerate(ranked, 1):
        row = message(
            "cli.capabilities.search.row",
            rank=rank,
            identity=paint(match["identity"], bold=True),
            score=match["score"],
            tokens=match["tokens"],
            unit=result["unit"],
        )
        click.echo(row)
        summary = _summary(snapshot, match["identity"])
        if summary:
            click.echo("   " + summary)
        why = reasons.get(match["identity"])
        if why is not None:
            similarity = "-" if why["similarity"] is None else f"{why['similarity']:.4f}"
            terms = ", ".join(why["terms"])
            click.echo(
                message(
                    "cli.capabilities.search.explain-row",
                    lexical=why["lexical"],
                    terms=terms,
                    similarity=similarity,
                    score=why["score"],
                )
            )
            if why["gloss"]:
                click.echo(
                    message(
                        "cli.capabilities.search.explain-gloss-row",
                        lexical=why["gloss"]["lexical"],
                        terms=", ".join(why["gloss"]["terms"]),
                        similarity=f"{why['gloss']['similarity']:.4f}",
                    )
                )


def _summary(snapshot: CatalogSnapshot, identity: str) -> str:
    """The first line of a capability's description, cut to a line's width."""
    capability = snapshot.get(identity)
    text = capability.description.strip() if capability is not None else ""
    return text.splitlines()[0][:160] if text else ""


def _search_table(ranked: list[dict[str, Any]], snapshot: CatalogSnapshot, unit: str) -> str:
    headers = [
        message("cli.column.rank"),
        message("cli.column.capability"),
        message("cli.column.score"),
        message("cli.column.cost", unit=unit),
        message("cli.column.description"),
    ]
    rows = [
        [
            str(rank),
            paint(match["identity"], bold=True),
            f"{match['score']:.3f}",
            str(match["tokens"]),
            _summary(snapshot, match["identity"])[:80],
        ]
        for rank, match in enumerate(ranked, 1)
    ]
    return table(headers, rows)


def command() -> click.Command:
    group = PtcGroup("capabilities", help=message("cli.capabilities.help"), epilog=message("cli.capabilities.examples"))
    for sub in (search_command(), plan_command(), set_command()):
        group.add_command(sub)
    return group
