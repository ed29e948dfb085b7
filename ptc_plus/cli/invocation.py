"""How a command says "the invocation is wrong": usage errors that show the command's usage (exit 2)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import click

from ptc_plus.errors import PtcError, UsageError


class WrongInvocation(Exception):
    """Carries a :class:`PtcError` that means the command line was wrong: exit 2 with the error's own code."""

    def __init__(self, error: PtcError) -> None:
        super().__init__(str(error))
        self.error = error


class InvocationError(click.UsageError):
    """A :class:`PtcError` raised as a usage error inside a command, with the context that shows its usage."""

    def __init__(self, error: PtcError, ctx: click.Context | None) -> None:
        super().__init__(error.message(), ctx)
        self.error = error


@contextlib.contextmanager
def usage_errors(*kinds: type[PtcError]) -> Iterator[None]:
    """Inside this block, errors of ``kinds`` are usage errors (exit 2) rather than failures (exit 1)."""
    try:
        yield
    except kinds as error:
        raise WrongInvocation(error) from error


def _with_context(error: click.UsageError, ctx: click.Context) -> click.UsageError:
    # click's parser raises some errors (an option missing its value) without the context that shows the usage.
    if error.ctx is None:
        error.ctx = ctx
    return error


class PtcCommand(click.Command):
    """A command whose usage errors (:class:`UsageError`, :func:`usage_errors`) show its usage and help hint."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except click.UsageError as error:
            raise _with_context(error, ctx) from None

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except UsageError as error:
            raise InvocationError(error, ctx) from error
        except WrongInvocation as wrapped:
            raise InvocationError(wrapped.error, ctx) from wrapped.error


def ptc_command(name: str | None = None, **settings: Any) -> Callable[[Callable[..., Any]], PtcCommand]:
    """``click.command`` making a :class:`PtcCommand`: use it for every ``ptc-plus`` command."""
    return click.command(name, cls=PtcCommand, **settings)


class PtcGroup(click.Group):
    """A group whose subcommands are :class:`PtcCommand`\\ s and that lists them in :data:`COMMANDS` order."""

    command_class = PtcCommand

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except click.UsageError as error:
            raise _with_context(error, ctx) from None

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(self.commands)


PtcGroup.group_class = PtcGroup
