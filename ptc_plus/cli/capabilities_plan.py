"""``ptc-plus capabilities plan`` and ``ptc-plus capabilities set``: the plan and its editor.

``plan`` shows what a new session in the workspace would get, over the
reference host's demo tools, computed exactly as session start computes it
(:func:`ptc_plus.session.provision.session_plan`). ``set`` edits the
workspace config file (atomic, comments kept); running and resumed sessions
keep their frozen plans.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import orjson

from hookspecs.i18n import message
from hookspecs.reference.demo_tools import demo_tool_definitions
from ptc_plus.capabilities.catalog import build_catalog
from ptc_plus.capabilities.cost import offline_counter
from ptc_plus.config import INHERIT, load_config, set_capability
from ptc_plus.plan import plan_to_json, reason_text
from ptc_plus.session.provision import session_plan
from ptc_plus.session.report import plan_lines

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
    loaded = load_config(workspace)
    catalog = build_catalog(tools=[d.spec for d in demo_tool_definitions(workspace)])
    counter = offline_counter()
    plan = session_plan(catalog, loaded, counter)
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
    result = set_capability(workspace, args.identity, args.value)
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
