"""``ptc-plus sdk --tools FILE.json [--budget N]``: print the rendered SDK; its cost goes to stderr.

A tools file that cannot be read or is not a list of tool definitions, and a
budget below 1, are usage errors (exit 2).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ptc_plus.capabilities import build_catalog, build_snapshot, discovery
from ptc_plus.cli import usage_errors
from ptc_plus.errors import UsageError
from ptc_plus.i18n import message
from ptc_plus.sdk import InvalidToolsFile, load_tool_specs, module_text, render_sdk


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser("sdk", help=message("cli.sdk.help"))
    parser.add_argument("--tools", required=True, type=Path, metavar="FILE.json", help=message("cli.sdk.tools"))
    parser.add_argument("--budget", type=int, default=None, metavar="N", help=message("cli.sdk.budget"))
    parser.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    with usage_errors(InvalidToolsFile):
        specs = load_tool_specs(args.tools)
    if args.budget is not None and args.budget <= 0:
        raise UsageError(detail=f"--budget must be a positive number of tokens, got {args.budget}")
    snapshot = build_snapshot(build_catalog(tools=specs))
    if args.budget is None:
        sdk = render_sdk(specs)
        text, tools, types = sdk.text, len(sdk.tools), len(sdk.types)
    else:
        # The budget bounds the delivered contracts; the module header comes on top.
        delivered = discovery.inspect(snapshot, [c.identity for c in snapshot.catalog.capabilities], budget=args.budget)
        text = module_text(delivered["text"])
        tools = len(delivered["expanded"])
        types = text.count("(TypedDict)") + text.count("= TypedDict(")
        for ref in delivered["not_expanded"]:
            unit = snapshot.counter.unit
            line = message(
                "cli.sdk.not_expanded", reason=ref["reason"], identity=ref["identity"], tokens=ref["tokens"], unit=unit
            )
            print(line, file=sys.stderr)
    sys.stdout.write(text)
    cost = snapshot.counter.count(text)
    print(message("cli.sdk.cost", tokens=cost, unit=snapshot.counter.unit, tools=tools, types=types), file=sys.stderr)
    return 0
