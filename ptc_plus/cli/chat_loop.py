"""The ``ptc-plus chat`` session loop: turns, slash commands, Ctrl-C and usage records.

One reference-host session is driven by a person: a line starting with ``/``
is a slash command (its receipt is shown, the model never sees it; a name no
command has lists them all and suggests the nearest), anything else is a user
turn. A turn runs as its own task: Ctrl-C while it runs cancels
it (the host settles what it started as cancelled, a running program is
aborted) and the session goes on; Ctrl-C at the prompt clears the line, Ctrl-D
or ``/exit`` ends the session. Every model request's token counts go to the
session log as a ``chat-model-usage`` event: the prompt total (``input``), its cached
and uncached parts, the output; unknown counts stay ``null`` (a server that reports
``prompt_tokens`` without a cached split gives the total, not the parts).
"""

from __future__ import annotations

import asyncio
import contextlib
import difflib
import signal
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

from hookspecs.reference import HostError, RequestUsage, Session
from ptc_plus.cli.chat_view import ChatView
from ptc_plus.i18n import message

USAGE_EVENT = "chat-model-usage"
EXIT_COMMANDS = ("/exit", "/quit")

Reader = Callable[[], Awaitable[str | None]]
"""The next line the person typed; ``None`` at end of input. Raises KeyboardInterrupt for Ctrl-C at the prompt."""


def record_usage(session: Session, usage: RequestUsage) -> None:
    session.log.append(
        USAGE_EVENT,
        {
            "input": usage.input,
            "cached_input": usage.cached_input,
            "uncached_input": usage.uncached_input,
            "output": usage.output,
        },
    )


ANSWERED, CANCELLED, FAILED = "answered", "cancelled", "failed"


async def run_turn(session: Session, view: ChatView, text: str) -> str:
    """One user turn with Ctrl-C cancelling it; returns :data:`ANSWERED`, :data:`CANCELLED` or :data:`FAILED`."""
    view.streamed = False
    task = asyncio.ensure_future(session.run_turn(text))
    loop = asyncio.get_running_loop()
    cancelled = False

    def interrupt() -> None:
        nonlocal cancelled
        cancelled = True
        task.cancel()

    installed = False
    with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):  # no signals off the main thread
        loop.add_signal_handler(signal.SIGINT, interrupt)
        installed = True
    try:
        summary = await task
    except asyncio.CancelledError:
        if not cancelled:
            raise
        view.note(message("cli.chat.cancelled"))
        return CANCELLED
    except HostError as error:
        view.note(message("cli.chat.step-failed", code=error.code, detail=error.message()))
        return FAILED
    finally:
        if installed:
            loop.remove_signal_handler(signal.SIGINT)
    if not view.streamed and summary.final_text:
        view.text(summary.final_text)  # a whole (not streamed) answer arrives only now
    view.end_line()
    return ANSWERED


def show_command(session: Session, view: ChatView, line: str, marks: Callable[[str], str] | None = None) -> None:
    """A slash command's receipt; ``marks(tool)`` adds a word to a ``/tools`` line (e.g. what the plan says)."""
    name = line[1:].split(maxsplit=1)[0] if len(line) > 1 else ""
    known = command_names(session)
    if name not in known:
        close = difflib.get_close_matches(name, known, n=1)
        hint = message("cli.chat.unknown-command.nearest", command="/" + close[0]) if close else ""
        view.line(message("cli.chat.unknown-command", command=line.split()[0], hint=hint))
        view.line(help_text(session))
        return
    receipt = session.command(line)
    view.line(f"[{receipt.status.value}]")
    listed = receipt.data.get("tools") if name == "tools" and isinstance(receipt.data, dict) else None
    shown: list[str] = []
    for text in receipt.text.splitlines():
        tool = text.split(" ", 1)[0]
        mark = marks(tool) if marks is not None and isinstance(listed, list) and tool in listed else ""
        shown.append("  " + text + (f" {mark}" if mark else ""))
    if shown:  # one block, so a code fence or a JSON receipt is seen whole and left unwrapped
        view.line("\n".join(shown))


def command_names(session: Session) -> list[str]:
    """Every slash command's name: the host's and the plugins', then the chat's own."""
    return [*(c.name for c in session.host.command_table()), *(c[1:] for c in EXIT_COMMANDS)]


def help_text(session: Session) -> str:
    """The host's and the plugins' commands, then the chat's own."""
    lines = [f"/{c.name} — {c.summary}" for c in sorted(session.host.command_table(), key=lambda c: c.name)]
    lines.append(message("cli.chat.help-exit"))
    return "\n".join(lines)


async def interactive(session: Session, view: ChatView, read: Reader, marks: Callable[[str], str] | None = None) -> int:
    """Read lines until ``/exit`` or end of input; returns the exit code (0)."""
    view.line(message("cli.chat.welcome", session=session.agent.session_id))
    while True:
        try:
            line = await read()
        except KeyboardInterrupt:
            continue  # Ctrl-C at the prompt drops the line, as a shell does
        if line is None:
            view.end_line()
            return 0
        line = line.strip()
        if not line:
            continue
        if line in EXIT_COMMANDS:
            return 0
        if line == "/help":
            view.line(help_text(session))
        elif line.startswith("/"):
            show_command(session, view, line, marks)
        else:
            await run_turn(session, view, line)


def prompt_reader(history: Path) -> Reader:
    """Line editing and a persistent history on a terminal (prompt_toolkit); plain lines otherwise."""
    if not (sys.stdin.isatty() and sys.stdout.isatty()):

        async def plain() -> str | None:
            line = await asyncio.to_thread(sys.stdin.readline)
            return line if line else None

        return plain
    from prompt_toolkit import PromptSession
    from prompt_toolkit.history import FileHistory

    with contextlib.suppress(OSError):
        history.parent.mkdir(parents=True, exist_ok=True)
    prompt: PromptSession[str] = PromptSession(history=FileHistory(str(history)))

    async def edited() -> str | None:
        try:
            return await prompt.prompt_async("› ")
        except EOFError:
            return None

    return edited
