"""The ``ptc-plus`` command line.

Each subcommand lives in its own module exposing ``add_parser(subparsers)``,
which registers an ``argparse`` parser whose ``func`` default takes the
parsed namespace and returns the exit code.

Exit codes, the same for every subcommand:

- **0**: the command did what was asked (a gate that says "disabled" or a
  search with no match is an answer, not a failure).
- **1**: the command was well formed but could not be carried out: a config
  file it must edit is not valid TOML, the catalog or the sandbox is
  unavailable, a program failed, or standard output was closed early
  (``ptc-plus capabilities plan | head``: no traceback, just exit 1).
- **2**: usage error, i.e. the invocation itself is wrong: unknown command or
  option, a value out of range (``--limit 0``, ``--budget 0``), a value
  outside its set (``capabilities set X bogus``), a malformed capability
  identity, or a file named on the command line that cannot be read or is
  not what the option expects (``--tools nofile.json``). The error's own code
  is printed (``PTC-1001`` for argument syntax, else e.g. ``PTC-4021``).

Subcommands mark the errors that mean "the invocation is wrong" with
:func:`usage_errors`; any other :class:`~ptc_plus.errors.PtcError` exits 1.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import sys
from collections.abc import Iterator, Sequence

from ptc_plus import __version__
from ptc_plus.errors import PtcError, UsageError

# Module names under ptc_plus.cli, in the order ``--help`` lists them.
COMMANDS: tuple[str, ...] = ("demo", "plugins", "gate", "sdk", "capabilities", "exec")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(detail=message)


class _WrongInvocation(Exception):
    """Carries a :class:`PtcError` that means the command line was wrong: exit 2 with the error's own code."""

    def __init__(self, error: PtcError) -> None:
        super().__init__(str(error))
        self.error = error


@contextlib.contextmanager
def usage_errors(*kinds: type[PtcError]) -> Iterator[None]:
    """Inside this block, errors of ``kinds`` are usage errors (exit 2) rather than failures (exit 1)."""
    try:
        yield
    except kinds as error:
        raise _WrongInvocation(error) from error


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="ptc-plus", description="Programmatic Tool Calling for agent hosts.")
    parser.add_argument("--version", action="version", version=f"ptc-plus {__version__}")
    subparsers = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for name in COMMANDS:
        importlib.import_module(f"ptc_plus.cli.{name}").add_parser(subparsers)
    return parser


def _report(error: PtcError) -> None:
    print(f"ptc-plus: {error.code}: {error.message()}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; returns the exit code (see the module docstring)."""
    try:
        args = build_parser().parse_args(argv)
        code: int = args.func(args)
        sys.stdout.flush()  # a closed pipe shows up here, not at interpreter exit
    except BrokenPipeError:
        _silence_stdout()
        return 1
    except UsageError as error:
        _report(error)
        return 2
    except _WrongInvocation as wrapped:
        _report(wrapped.error)
        return 2
    except PtcError as error:
        _report(error)
        return 1
    return code


def _silence_stdout() -> None:
    """The reader went away: point stdout at /dev/null so the final flush at exit cannot fail again."""
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
