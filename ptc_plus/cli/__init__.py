"""The ``ptc-plus`` command line.

Each subcommand lives in its own module exposing ``add_parser(subparsers)``,
which registers an ``argparse`` parser whose ``func`` default takes the
parsed namespace and returns the exit code (0 ok, 1 failed, 2 usage error).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from ptc_plus import __version__
from ptc_plus.errors import PtcError, UsageError

# Module names under ptc_plus.cli, in the order ``--help`` lists them.
COMMANDS: tuple[str, ...] = ("demo", "plugins", "gate", "sdk", "capabilities", "exec")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(detail=message)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="ptc-plus", description="Programmatic Tool Calling for agent hosts.")
    parser.add_argument("--version", action="version", version=f"ptc-plus {__version__}")
    subparsers = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for name in COMMANDS:
        importlib.import_module(f"ptc_plus.cli.{name}").add_parser(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        code: int = args.func(args)
    except UsageError as exc:
        print(f"ptc-plus: {exc.code}: {exc.message()}", file=sys.stderr)
        return 2
    except PtcError as exc:
        print(f"ptc-plus: {exc.code}: {exc.message()}", file=sys.stderr)
        return 1
    return code
