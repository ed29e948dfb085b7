"""``ptc-plus capabilities <sub>``: the workspace's capabilities as a new session would get them.

``search`` answers from the effective set of the plan a new session in the
workspace would get (the same code path as ``plan``,
:mod:`ptc_plus.cli.workspace_plan`): ``off`` members are never found, as in
a session's own ``capabilities.search``. Sub-subcommands are registered from :data:`SUBCOMMANDS`: each entry is an
``add_parser(subparsers)`` callable that adds one parser and sets ``func``
(namespace → exit code). To add ``plan`` or ``set``, write its module with an
``add_parser`` and append it here.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from ptc_plus.capabilities import InvalidBudget, InvalidDiscoveryArgument, build_catalog, discovery
from ptc_plus.cli import usage_errors
from ptc_plus.cli.capabilities_plan import add_plan_parser, add_set_parser
from ptc_plus.cli.workspace_plan import new_session_plan
from ptc_plus.i18n import message
from ptc_plus.sdk import InvalidToolsFile, load_tool_specs


def _add_search(subparsers: Any) -> None:
    parser = subparsers.add_parser("search", help=message("cli.capabilities.search.help"))
    parser.add_argument("query", help=message("cli.capabilities.search.query"))
    parser.add_argument("--json", action="store_true", help=message("cli.json"))
    parser.add_argument("--tools", type=Path, metavar="FILE.json", help=message("cli.capabilities.search.tools"))
    parser.add_argument("--workspace", type=Path, default=None, help=message("cli.capabilities.search.workspace"))
    parser.add_argument("--limit", type=int, default=10, help=message("cli.capabilities.search.limit"))
    parser.add_argument("--budget", type=int, default=None, help=message("cli.capabilities.search.budget"))
    parser.set_defaults(func=_run_search)


def _run_search(args: argparse.Namespace) -> int:
    workspace = (args.workspace or Path.cwd()).resolve()
    catalog = None
    if args.tools is not None:
        with usage_errors(InvalidToolsFile):
            catalog = build_catalog(tools=load_tool_specs(args.tools))
    snapshot = new_session_plan(workspace, catalog).snapshot()
    with usage_errors(InvalidDiscoveryArgument, InvalidBudget):
        result = discovery.search(snapshot, args.query, budget=args.budget, limit=args.limit)
    if args.json:
        sys.stdout.write(orjson.dumps(result, option=orjson.OPT_INDENT_2).decode() + "\n")
        return 0
    ranked = sorted([*result["expanded"], *result["not_expanded"]], key=lambda m: (-m["score"], m["identity"]))
    if not ranked:
        print(message("cli.capabilities.search.none", query=repr(args.query)))
        return 0
    for rank, match in enumerate(ranked, 1):
        print(
            message(
                "cli.capabilities.search.row",
                rank=rank,
                identity=match["identity"],
                score=match["score"],
                tokens=match["tokens"],
                unit=result["unit"],
            )
        )
        description = snapshot.get(match["identity"])
        if description is not None and description.description.strip():
            print("   " + description.description.strip().splitlines()[0][:160])
    return 0


SUBCOMMANDS: tuple[Callable[[Any], None], ...] = (_add_search, add_plan_parser, add_set_parser)
"""Registration functions of the sub-subcommands, in ``--help`` order."""


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser("capabilities", help=message("cli.capabilities.help"))
    nested = parser.add_subparsers(dest="capabilities_command", required=True, parser_class=type(parser))
    for register in SUBCOMMANDS:
        register(nested)
