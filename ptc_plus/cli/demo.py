"""``ptc-plus demo``: a complete scripted session on the embedded reference host."""

from __future__ import annotations

import argparse
import asyncio
import tempfile
from pathlib import Path
from typing import Any

from ptc_plus.demo import run_demo
from ptc_plus.i18n import message


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser("demo", help=message("cli.demo.help"))
    parser.add_argument("--workspace", type=Path, help=message("cli.demo.workspace"))
    parser.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    workspace = args.workspace or Path(tempfile.mkdtemp(prefix="ptc-plus-demo-"))
    return asyncio.run(run_demo(workspace.resolve()))
