"""What ``ptc-plus chat`` shows as a session works: streamed answer text, and each tool call as it happens.

The observer is a host plugin: it sees every call that passed the guard at
the ``tool-execute`` seam (top-level and nested alike, a nested one indented
under its outer call) and every settled result, refused ones included. It
never changes a call or its result.
"""

from __future__ import annotations

import sys
from collections.abc import Generator
from pathlib import Path
from typing import Any

import click

from hookspecs import ToolCall, ToolContext, ToolResult, ToolSpec, hookimpl
from hookspecs.serialization import canonical_bytes
from hookspecs.services import HostServices
from ptc_plus.cli.output import paint
from ptc_plus.cli.wrap import echo, terminal_width, wrap
from ptc_plus.config import load_config
from ptc_plus.i18n import message

SHORT = 120
"""Characters of arguments or a result shown under ``--verbose``."""


def _short(value: object, limit: int = SHORT) -> str:
    text = canonical_bytes(value).decode()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def report_config_issues(workspace: Path) -> None:
    """Each problem of the workspace's config files on standard error, as ``exec`` reports them."""
    for issue in load_config(workspace).issues:
        echo(message("cli.exec.config-issue", code=issue.code, issue=issue.message()), err=True)


class ChatView:
    """Writes to the terminal; remembers whether an answer's line is still open."""

    def __init__(self, *, verbose: bool, calls_to_stderr: bool = False) -> None:
        self.verbose = verbose
        # One-shot mode keeps standard output for the answer alone, so a script can take it as it is.
        self._calls_to_stderr = calls_to_stderr
        self.line_open = False
        self.streamed = False
        """Whether answer text was shown since the turn began."""

    def _write(self, text: str) -> None:
        click.echo(text, nl=False)

    def note(self, text: str, *, prose: bool = True) -> None:
        """A line about the work (a call), not the answer: standard error in one-shot mode.

        ``prose``: the chat's own words, wrapped to the terminal (:mod:`ptc_plus.cli.wrap`); ``False`` for what
        must reach the terminal as it is (the user's text, JSON).
        """
        if self._calls_to_stderr:
            click.echo(wrap(text, terminal_width(sys.stderr)) if prose else text, err=True)
        else:
            self.line(text, prose=prose)

    def text(self, piece: str) -> None:
        self.streamed = True
        self._write(piece)
        self.line_open = not piece.endswith("\n")

    def line(self, text: str, *, prose: bool = True) -> None:
        """``text`` on lines of its own; ``prose`` as for :meth:`note` (the answer's text is never wrapped)."""
        self.end_line()
        self._write((wrap(text, terminal_width(sys.stdout)) if prose else text) + "\n")

    def end_line(self) -> None:
        if self.line_open:
            self._write("\n")
            self.line_open = False

    def call_started(self, call: ToolCall) -> None:
        indent = "    " if call.parent_call_id else "  "
        shown = f"({_short(call.arguments)})" if self.verbose else ""
        self.note(paint(f"{indent}→ {call.tool}{shown}", fg="cyan"), prose=not self.verbose)  # verbose shows JSON

    def call_settled(self, call: ToolCall, result: ToolResult) -> None:
        indent = "    " if call.parent_call_id else "  "
        status = result.status.value
        detail = ""
        if result.error is not None:
            first = result.error.message.splitlines()[0] if result.error.message else ""
            # A message that names its code already (run_code's report: "exception (PTC-2101): …") is not
            # prefixed with it again.
            if result.error.code == status:
                detail = ""  # the status says it ("cancelled"), not again as a code and a sentence
            else:
                detail = f" {first}" if result.error.code in first else f" {result.error.code}: {first}"
        elif self.verbose:
            detail = " " + _short(result.value)
        painted = paint(f"{indent}← {call.tool} {status}{detail}", fg="green" if result.ok else "red")
        self.note(painted, prose=not self.verbose)


class CallObserver:
    """The host plugin feeding a :class:`ChatView`."""

    def __init__(self, view: ChatView) -> None:
        self._view = view

    @hookimpl(wrapper=True)
    def agent_host_tool_execute(
        self, call: ToolCall, spec: ToolSpec, context: ToolContext
    ) -> Generator[None, ToolResult, ToolResult]:
        self._view.call_started(call)
        return (yield)

    @hookimpl
    def agent_host_tool_result(self, call: ToolCall, result: ToolResult, services: HostServices) -> Any:
        self._view.call_settled(call, result)
        return None
