"""The ``ptc-plus`` command line (click, ADR 0059).

Each subcommand lives in its own module exposing ``command() -> click.Command``;
the group is built afresh for each run, so help texts are looked up in the
locale of that run (``PTC_LOCALE=zh`` gives Chinese help, click's own words
included: :mod:`ptc_plus.cli.click_words`). A run imports only the module of
the command it runs (click's lazy group, issue 32, ADR 0115): ``--version``
and ``--help`` import none, the help's command list coming from the
commands' ``cli.<command>.help`` messages; :func:`build_cli` builds every
command, for what walks them all (the tests, ``llm``'s mounted commands).

Exit codes, the same for every subcommand:

- **0**: the command did what was asked (a gate that says "disabled" or a
  search with no match is an answer, not a failure).
- **1**: the command was well formed but could not be carried out: a config
  file it must edit is not valid TOML, the catalog or the sandbox is
  unavailable, a program failed, or standard output was closed early
  (``ptc-plus capabilities plan | head``: no traceback, just exit 1).
- **2**: usage error, i.e. the invocation itself is wrong: unknown command or
  option, a value out of range (``--limit 0``), a value outside its set, a
  malformed capability identity, a ``--workspace`` that is not an existing
  directory, or a file named on the command line that cannot be read. The
  usage and a ``--help`` hint come first, then the error's own code
  (``PTC-1001`` for argument syntax, else e.g. ``PTC-4021``).
- **130**: interrupted (Ctrl-C).

Under ``--json`` every outcome, errors included, is one versioned object on
standard output (:mod:`ptc_plus.cli.output`); without it, errors go to
standard error as ``ptc-plus: PTC-xxxx: message``.

Subcommands mark the errors that mean "the invocation is wrong" with
:func:`usage_errors`; any other :class:`~ptc_plus.errors.PtcError` exits 1.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ptc_plus import __version__

if TYPE_CHECKING:
    import click

    from ptc_plus.errors import PtcError

# Module names under ptc_plus.cli, in the order ``--help`` lists them.
COMMANDS: tuple[str, ...] = (
    "demo",
    "exec",
    "sdk",
    "capabilities",
    "stats",
    "plugins",
    "gate",
    "config",
    "settings",
    "mcp",
    "mcp_serve",
    "chat",
    "sessions",
    "eval",
    "completion",
)

EXIT_INTERRUPTED = 130
INTERNAL_ERROR = "PTC-1000"
TRACEBACK_VARIABLE = "PTC_TRACEBACK"
"""Set it (to anything) to see the Python traceback of an internal error instead of its one line."""

__all__ = ["COMMANDS", "EXIT_INTERRUPTED", "build_cli", "main", "print_search", "usage_errors"]


def build_cli() -> click.Group:
    """The ``ptc-plus`` group with every subcommand built, help texts in the current locale."""
    from ptc_plus.cli.lazy_group import build_cli as built

    return built()


def print_search(
    snapshot: Any, query: str, result: Mapping[str, Any], reasons: Mapping[str, Any] | None = None
) -> None:
    """``ptc-plus capabilities search``'s human list of a discovery answer, for other front ends (``llm
    capabilities search``); imported when called, as the commands are."""
    from ptc_plus.cli.capabilities import print_search as show

    show(snapshot, query, result, reasons)


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; returns the exit code (see the module docstring)."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args == ["--version"]:  # click's answer, without importing click or reading a message catalog
        return _version()
    if args in (["--help"], ["-h"]):  # click's text, without importing click (ADR 0123)
        from ptc_plus.cli.fast_help import top_level_help

        text = top_level_help()
        if text is not None:
            return _print(text)
    from ptc_plus.cli.click_words import localized_click
    from ptc_plus.cli.output import wants_json

    as_json = wants_json(args)
    with localized_click():  # click's words, error messages included, are formatted in the locale
        return _run(args, as_json)


def usage_errors(*kinds: type[PtcError]) -> contextlib.AbstractContextManager[None]:
    """:func:`ptc_plus.cli.invocation.usage_errors`, imported when used."""
    from ptc_plus.cli.invocation import usage_errors as errors_of

    return errors_of(*kinds)


def _version() -> int:
    return _print(f"ptc-plus {__version__}")


def _print(text: str) -> int:
    """Print ``text`` and a newline as click's ``echo`` would; 1 if the reader went away."""
    try:
        print(text)
        sys.stdout.flush()
    except BrokenPipeError:
        _silence_stdout()
        return 1
    return 0


def _run(args: list[str], as_json: bool) -> int:
    import click

    from ptc_plus.cli.invocation import InvocationError, WrongInvocation
    from ptc_plus.cli.lazy_group import root
    from ptc_plus.errors import PtcError, UsageError
    from ptc_plus.i18n import message

    try:
        code = root().main(args=args, prog_name="ptc-plus", standalone_mode=False)
        sys.stdout.flush()  # a closed pipe shows up here, not at interpreter exit
    except BrokenPipeError:
        _silence_stdout()
        return 1
    except click.exceptions.Exit as done:
        return done.exit_code
    except (click.exceptions.Abort, KeyboardInterrupt):
        print(message("cli.interrupted"), file=sys.stderr)
        return EXIT_INTERRUPTED
    except click.exceptions.NoArgsIsHelpError as bare:
        # A group named without a subcommand: its help (the subcommands) answers better than its usage line.
        if not as_json:
            click.echo(bare.ctx.get_help(), err=True)
        _report(UsageError(detail=message("cli.click.missing-command")), as_json)
        return 2
    except click.UsageError as problem:
        error = problem.error if isinstance(problem, InvocationError) else UsageError(detail=problem.format_message())
        _report_usage(error, problem.ctx, as_json)
        return 2
    except WrongInvocation as wrapped:
        _report(wrapped.error, as_json)
        return 2
    except UsageError as error:
        _report(error, as_json)
        return 2
    except PtcError as error:
        _report(error, as_json)
        return 1
    except Exception as bug:  # a defect of ours, not the user's doing: one line, the trace only on request
        if os.environ.get(TRACEBACK_VARIABLE):
            raise
        detail = f"{type(bug).__name__}: {bug} ({message('cli.internal-hint', variable=TRACEBACK_VARIABLE)})"
        _report(PtcError(INTERNAL_ERROR, detail=detail), as_json)
        return 1
    return code if isinstance(code, int) else 0


def _report(error: PtcError, as_json: bool) -> None:
    from ptc_plus.cli.output import emit_error  # cattrs, for the JSON encoder: only a --json run needs it

    if as_json:
        emit_error(error)
    else:
        print(f"ptc-plus: {error.code}: {error.message()}", file=sys.stderr)


def _report_usage(error: PtcError, ctx: click.Context | None, as_json: bool) -> None:
    import click

    from ptc_plus.i18n import message

    if not as_json and ctx is not None:
        click.echo(ctx.get_usage(), err=True)
        click.echo(message("cli.try-help", command=ctx.command_path), err=True)
    _report(error, as_json)


def _silence_stdout() -> None:
    """The reader went away: point stdout at /dev/null so the final flush at exit cannot fail again."""
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
