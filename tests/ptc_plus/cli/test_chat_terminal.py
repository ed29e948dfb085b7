"""``ptc-plus chat`` at a real terminal: the installed command in a pseudo-terminal, typed at like a person.

Type a prompt and see the streamed answer, run ``/capabilities refresh``,
press Ctrl-C while a step streams (the step stops, the session goes on and
answers the next prompt), then ``/exit``.
"""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import signal
import struct
import termios
import time
from pathlib import Path

from tests.ptc_plus.cli.test_chat import CLI, FakeOpenAI, chat_env, run_code_call

ESCAPES = re.compile(rb"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[()][0-9A-Za-z]|\x1b[=>]|\r")
PROMPT = "›"


class Terminal:
    """A child process on a pseudo-terminal; what it wrote is kept, escape sequences removed."""

    def __init__(self, argv: list[str], env: dict[str, str], *, columns: int = 0) -> None:
        """``columns``: the terminal's width, set before the command starts (0: a size the terminal does not know)."""
        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # the child: become the command
            if columns:
                fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
            os.execve(argv[0], argv, env)
        self.seen = ""

    def _read(self, timeout: float) -> bool:
        ready, _, _ = select.select([self.fd], [], [], timeout)
        if not ready:
            return False
        try:
            data = os.read(self.fd, 65536)
        except OSError:  # the child closed the terminal
            return False
        self.seen += ESCAPES.sub(b"", data).decode("utf-8", "replace")
        return bool(data)

    def expect(self, text: str, *, after: int = 0, timeout: float = 60) -> int:
        """Wait until ``text`` appears after position ``after``; returns the position just past it."""
        deadline = time.monotonic() + timeout
        while (found := self.seen.find(text, after)) < 0:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"{text!r} not seen; the terminal shows:\n{self.seen}")
            self._read(min(left, 0.5))
        return found + len(text)

    def type(self, text: str) -> None:
        os.write(self.fd, text.encode())

    def wait(self, timeout: float = 60) -> int:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self._read(0.1)
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                return os.waitstatus_to_exitcode(status)
        raise AssertionError(f"the chat did not end; the terminal shows:\n{self.seen}")

    def kill(self) -> None:
        try:
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass
        os.close(self.fd)


def test_a_person_at_the_terminal(tmp_path: Path, server: FakeOpenAI) -> None:
    server.replies.append(("stream", ["Hello ", "from ", "the model."], None))
    server.replies.append(("hang", ["Thinking very hard"]))
    server.replies.append(("stream", ["Still here."], None))
    env = chat_env(TERM="xterm", PROMPT_TOOLKIT_NO_CPR="1", HOME=str(tmp_path))
    argv = [CLI, "chat", "--workspace", str(tmp_path), "--base-url", server.url, "--model", "m"]
    terminal = Terminal(argv, env)
    try:
        at = terminal.expect(PROMPT)
        terminal.type("say hello\r")
        at = terminal.expect("Hello from the model.", after=at)
        at = terminal.expect(PROMPT, after=at)

        terminal.type("/capabilities refresh\r")
        at = terminal.expect("[unchanged]", after=at)  # the config did not change since the session began
        at = terminal.expect("Refresh:", after=at)
        at = terminal.expect(PROMPT, after=at)

        terminal.type("/help\r")
        at = terminal.expect("/capabilities", after=at)
        at = terminal.expect("/exit", after=at)
        at = terminal.expect(PROMPT, after=at)

        terminal.type("think\r")
        at = terminal.expect("Thinking very hard", after=at)
        terminal.type("\x03")  # Ctrl-C mid-step
        at = terminal.expect("cancelled", after=at)
        at = terminal.expect(PROMPT, after=at)

        terminal.type("are you there?\r")
        at = terminal.expect("Still here.", after=at)
        at = terminal.expect(PROMPT, after=at)
        terminal.type("/exit\r")
        assert terminal.wait() == 0
    finally:
        terminal.kill()
    assert [r["messages"][-1]["content"] for r in server.requests] == ["say hello", "think", "are you there?"]
    assert (tmp_path / ".agent-host" / "chat-history").read_text().count("+say hello") == 1


def test_a_cancelled_program_a_refresh_and_the_way_back(tmp_path: Path, server: FakeOpenAI) -> None:
    asleep = "import asyncio\nprint('asleep', flush=True)\nawait asyncio.sleep(600)"
    server.replies.append(("stream", [], [run_code_call(asleep, streamed=True)]))
    env = chat_env(TERM="xterm", PROMPT_TOOLKIT_NO_CPR="1", HOME=str(tmp_path))
    argv = [CLI, "chat", "--workspace", str(tmp_path), "--base-url", server.url, "--model", "m", "--tools", "demo"]
    terminal = Terminal(argv, env)
    try:
        at = terminal.expect(PROMPT)
        terminal.type("sleep a while\r")
        at = terminal.expect("→ run_code", after=at)
        terminal.type("\x03")  # Ctrl-C while the program runs
        at = terminal.expect("← run_code cancelled", after=at)
        settled = terminal.seen[at:].split("\n", 1)[0]
        assert settled.strip() == "", settled  # "cancelled" is said once, not "cancelled cancelled: … cancelled."
        at = terminal.expect(PROMPT, after=at)

        config = tmp_path / ".ptc-plus" / "config.toml"
        config.parent.mkdir(exist_ok=True)
        config.write_text('version = 1\n\n[capabilities."host:convert_units"]\ndisclosure = "off"\n')
        terminal.type("/capabilities refresh\r")
        at = terminal.expect("[applied]", after=at)
        at = terminal.expect(PROMPT, after=at)
        terminal.type("/tools\r")
        at = terminal.expect("convert_units [", after=at)
        marked = terminal.seen[at:].split("\n", 1)[0]
        assert "(turned off by capability refresh #1: programs cannot call it)" in marked, marked
        at = terminal.expect(PROMPT, after=at)

        terminal.type("/exit\r")
        at = terminal.expect("go on with: ptc-plus chat --resume s-", after=at)
        assert terminal.wait() == 0
    finally:
        terminal.kill()
