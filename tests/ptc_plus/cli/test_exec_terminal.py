"""``ptc-plus exec`` at a terminal, run as a real process: output streams, Ctrl-C ends the run cleanly
(exit 130, the output so far kept), and exec says when it waits on the terminal (ADR 0064).

Synchronisation is by events, never by elapsed time: the test waits (with a hang guard) for text on the
terminal or for a file a tool body writes.
"""

from __future__ import annotations

import contextlib
import os
import pty
import select
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

CLI = str(Path(sys.executable).with_name("ptc-plus"))
HANG_GUARD_S = 60.0

MARK_TOOLS = """\
from pathlib import Path
from hookspecs import tool

def make_tools(workspace):
    @tool('mark', description='Leave a marker file in the workspace.')
    async def mark(arguments, context):
        (Path(workspace) / 'marked').write_text('')
        return None
    return [mark]
"""


@pytest.fixture
def env() -> dict[str, str]:
    """This process's environment (isolated by conftest.py) on a dumb terminal, without ``PYTHONPATH``."""
    merged = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    merged.update(TERM="dumb")
    return merged


class Terminal:
    """The master side of a pseudo-terminal: what a person at the terminal would see and type."""

    def __init__(self) -> None:
        self.master, self.slave = pty.openpty()
        self.seen = b""

    def read_until(self, text: bytes) -> bytes:
        while text not in self.seen:
            ready, _, _ = select.select([self.master], [], [], HANG_GUARD_S)
            assert ready, f"hang guard: {text!r} never appeared; saw {self.seen!r}"
            try:
                chunk = os.read(self.master, 4096)
            except OSError:  # EIO: the other side closed
                break
            if not chunk:
                break
            self.seen += chunk
        return self.seen

    def read_rest(self) -> bytes:
        while True:
            ready, _, _ = select.select([self.master], [], [], HANG_GUARD_S)
            if not ready:
                return self.seen
            try:
                chunk = os.read(self.master, 4096)
            except OSError:
                return self.seen
            if not chunk:
                return self.seen
            self.seen += chunk

    def close(self) -> None:
        for fd in (self.master, self.slave):
            with contextlib.suppress(OSError):
                os.close(fd)


@pytest.fixture
def terminal() -> Iterator[Terminal]:
    opened = Terminal()
    yield opened
    opened.close()


def _wait_for(path: Path, process: subprocess.Popen[bytes]) -> None:
    for _ in range(int(HANG_GUARD_S * 20)):  # a hang guard, not a timing claim
        if path.exists():
            return
        assert process.poll() is None, "exec ended before the program reached its marker"
        select.select([], [], [], 0.05)
    pytest.fail(f"hang guard: {path} never appeared")


def test_output_streams_to_a_terminal_while_the_program_runs(
    workspace: Path, tmp_path: Path, env: dict[str, str], terminal: Terminal
) -> None:
    program = tmp_path / "program.py"
    program.write_text(
        "import os, time\n"
        "print('first line', flush=True)\n"
        "while not os.path.exists('go'):\n"
        "    time.sleep(0.02)\n"
        "print('second line')\n"
        "return 42\n"
    )
    argv = [CLI, "exec", str(program), "--workspace", str(workspace), "--policy", "danger-full-access"]
    with subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=terminal.slave, env=env) as process:
        try:
            terminal.read_until(b"first line")
            assert process.poll() is None  # shown while the program is still running: it waits for 'go'
            (workspace / "go").write_text("")
            seen = terminal.read_until(b"=> 42")
            assert process.wait(HANG_GUARD_S) == 0
        finally:
            if process.poll() is None:
                process.kill()
    text = seen.decode().replace("\r\n", "\n")
    assert text.count("first line") == 1 and text.count("second line") == 1  # streamed, never printed twice
    assert text.index("first line") < text.index("second line") < text.index("=> 42")


@pytest.mark.parametrize("as_json", [False, True], ids=["human", "json"])
def test_ctrl_c_ends_the_run_keeps_its_output_and_exits_130(
    as_json: bool, workspace: Path, tmp_path: Path, env: dict[str, str]
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "exec_mark_tools.py").write_text(MARK_TOOLS)
    program = tmp_path / "program.py"
    program.write_text("print('made progress')\nawait tools.mark()\nimport time\ntime.sleep(600)\n")
    argv = [CLI, "exec", str(program), "--workspace", str(workspace), "--policy", "danger-full-access"]
    argv += ["--tools", "exec_mark_tools:make_tools", *(["--json"] if as_json else [])]
    # Its own session, so the test can signal the whole group as a terminal's Ctrl-C does.
    with subprocess.Popen(
        argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=project, env=env,
        start_new_session=True,
    ) as process:  # fmt: skip
        try:
            # The output is shipped before every tool call: once the tool ran, the host holds 'made progress'.
            _wait_for(workspace / "marked", process)
            os.killpg(process.pid, signal.SIGINT)
            out, err = process.communicate(timeout=HANG_GUARD_S)
        finally:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
    stderr = err.decode()
    assert process.returncode == 130, stderr
    assert "Traceback" not in stderr
    assert "interrupted" in stderr
    if as_json:
        shape = orjson.loads(out)
        assert shape["version"] == 1 and shape["ok"] is False and shape["error"]["kind"] == "abort"
        assert shape["logs"] == [{"stream": "stdout", "text": "made progress\n"}] and shape["calls"] == 1
    else:
        assert out.decode() == "made progress\n"
        assert "error [abort]" in stderr


def test_exec_says_when_it_reads_the_program_from_the_terminal(
    workspace: Path, env: dict[str, str], terminal: Terminal
) -> None:
    argv = [CLI, "exec", "--workspace", str(workspace), "--policy", "danger-full-access"]
    with subprocess.Popen(
        argv, stdin=terminal.slave, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
    ) as process:
        try:
            assert process.stderr is not None
            said = b""
            while b"Ctrl-D" not in said:  # the hint comes before exec waits for the program
                line = process.stderr.readline()
                assert line, f"exec never said it reads the terminal: {said!r}"
                said += line
            assert b"reading the program from the terminal" in said
            os.write(terminal.master, b"return 5\n\x04")
            out, _ = process.communicate(timeout=HANG_GUARD_S)
        finally:
            if process.poll() is None:
                process.kill()
    assert process.returncode == 0 and out.decode() == "=> 5\n"


def test_a_piped_program_gets_no_terminal_hint(workspace: Path, env: dict[str, str]) -> None:
    argv = [CLI, "exec", "--workspace", str(workspace), "--policy", "danger-full-access"]
    done = subprocess.run(argv, input=b"return 5", capture_output=True, env=env, timeout=HANG_GUARD_S)
    assert done.returncode == 0 and b"Ctrl-D" not in done.stderr
