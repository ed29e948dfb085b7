"""``ptc-plus capabilities plan`` and ``ptc-plus capabilities set``: the plan and its editor.

``plan`` shows what a new session in the workspace would get, over the
reference host's demo tools, computed exactly as session start computes it
(:mod:`ptc_plus.cli.workspace_plan`), with every config issue (a loosening
the workspace file may not make included). ``set`` edits the workspace
config file (atomic, comments kept); running and resumed sessions keep their
frozen plans. A malformed identity or value is a usage error; an identity
the current catalog does not offer is saved with a warning (it applies when
the capability appears).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import orjson

from ptc_plus.capabilities import CatalogUnavailable
from ptc_plus.cli import usage_errors
from ptc_plus.cli.workspace_plan import new_session_plan, workspace_catalog
from ptc_plus.config import INHERIT, CapabilityIdentityInvalid, DisclosureValueInvalid, set_capability
from ptc_plus.i18n import message
from ptc_plus.plan import plan_to_json, reason_text
from ptc_plus.session import plan_lines

JSON_VERSION = 1


def add_plan_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser("plan", help=message("cli.capabilities.plan.help"))
    parser.add_argument("--workspace", type=Path, default=None, help=message("cli.capabilities.plan.workspace"))
    parser.add_argument("--json", action="store_true", help=message("cli.json"))
    parser.set_defaults(func=run_plan)


def add_set_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser("set", help=message("cli.capabilities.set.help"))
    parser.add_argument("identity", help=message("cli.capabilities.set.identity"))
    parser.add_argument("value", help=message("cli.capabilities.set.value"))
    parser.add_argument("--workspace", type=Path, default=None, help=message("cli.capabilities.plan.workspace"))
    parser.set_defaults(func=run_set)


def run_plan(args: argparse.Namespace) -> int:
    workspace = (args.workspace or Path.cwd()).resolve()
    computed = new_session_plan(workspace)
    loaded, counter, plan = computed.loaded, computed.counter, computed.plan
    if args.json:
        document = {
            "version": JSON_VERSION,
            "workspace": str(workspace),
            "config_files": list(loaded.files),
            "issues": [issue.message("en") for issue in loaded.issues],
            "token_unit": counter.unit,
            "plan": plan_to_json(plan),
            "reasons": {entry.identity: reason_text(entry, "en") for entry in plan.entries},
        }
        sys.stdout.write(orjson.dumps(document, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode() + "\n")
        return 0
    files = ", ".join(loaded.files) or message("cli.capabilities.plan.no-files")
    print(message("cli.capabilities.plan.title", workspace=str(workspace), files=files))
    for issue in loaded.issues:
        print(message("cli.capabilities.plan.issue", issue=issue.message()), file=sys.stderr)
    for line in plan_lines(plan, counter.unit):
        print(line)
    return 0


def run_set(args: argparse.Namespace) -> int:
    workspace = (args.workspace or Path.cwd()).resolve()
    with usage_errors(CapabilityIdentityInvalid, DisclosureValueInvalid):
        result = set_capability(workspace, args.identity, args.value)
    if args.value != INHERIT and _unknown(workspace, args.identity):
        print(message("cli.capabilities.set.unknown", identity=args.identity), file=sys.stderr)
    inherited = message("cli.capabilities.set.inherited")
    value = inherited if args.value == INHERIT else args.value
    if result.changed:
        previous = result.previous or inherited
        print(
            message(
                "cli.capabilities.set.changed",
                file=str(result.file),
                identity=args.identity,
                value=value,
                previous=previous,
            )
        )
    else:
        print(message("cli.capabilities.set.unchanged", file=str(result.file), identity=args.identity, value=value))
    return 0


def _unknown(workspace: Path, identity: str) -> bool:
    """Whether the workspace's current catalog lacks ``identity`` (unknowable catalog: not reported)."""
    try:
        catalog = workspace_catalog(workspace)
    except CatalogUnavailable:
        return False
    return catalog.get(identity) is None
