"""``ptc-plus gate``: evaluate the §5 deployment gate for one user, toolset list and title."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

from ptc_plus.config import load_config
from ptc_plus.gate import evaluate_gate, parse_list, resolve_gate_settings
from ptc_plus.i18n import message


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser("gate", help=message("cli.gate.help"), description=message("cli.gate.help"))
    parser.add_argument("--user", required=True, help=message("cli.gate.user"))
    parser.add_argument("--toolsets", default="", help=message("cli.gate.toolsets"))
    parser.add_argument("--title", default=None, help=message("cli.gate.title"))
    parser.add_argument("--workspace", default=None, help=message("cli.gate.workspace"))
    parser.add_argument("--json", action="store_true", help=message("cli.gate.json"))
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print the decision; exit 0 whatever it is (a refusal is an answer, not a failure)."""
    workspace = Path(args.workspace).resolve() if args.workspace else Path.cwd()
    loaded = load_config(workspace)
    settings = resolve_gate_settings(os.environ, loaded)
    decision = evaluate_gate(
        settings,
        user_id=args.user,
        toolsets=sorted(parse_list(args.toolsets) or ()),
        title=args.title,
    )
    if args.json:
        # Python's default separators give exactly the documented shape: {"enabled": true, ...}
        print(json.dumps(decision.to_json(), ensure_ascii=False))
        return 0
    reason = message(f"gate.reason.{decision.reason}")
    key = "gate.enabled" if decision.enabled else "gate.disabled"
    print(message(key, stage=str(decision.stage), reason=reason))
    print(message("gate.debug-run", value="true" if decision.debug_run else "false"))
    for warning in decision.warnings:
        print(message("gate.warning", text=warning.render()))
    return 0
