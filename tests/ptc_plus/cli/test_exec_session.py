"""``ptc-plus exec FILE --session DIR``: each invocation is a new process and a cold start of the
kernel, recovered from the journal in DIR without running an earlier tool call again."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from tests.cli_runner import CliRunner

pytestmark = pytest.mark.needs_bwrap


def _notes(workspace: Path) -> int:
    with sqlite3.connect(workspace / ".demo" / "notes.sqlite") as db:
        count: int = db.execute("select count(*) from notes").fetchone()[0]
    return count


def _exec(workspace: Path, session: Path, program: str, *extra: str) -> subprocess.CompletedProcess[str]:
    """The installed command in a process of its own, as a person runs it."""
    path = workspace / "cell.py"
    path.write_text(program)
    script = str(Path(sys.executable).parent / "ptc-plus")
    command = [script, "exec", str(path), "--session", str(session), "--tools", "demo"]
    env = {**os.environ, "PTC_LOCALE": "en"}
    return subprocess.run(
        [*command, "--workspace", str(workspace), *extra], capture_output=True, text=True, env=env, timeout=120
    )


def test_later_invocations_see_earlier_names_and_no_tool_runs_twice(workspace: Path, tmp_path: Path) -> None:
    session = tmp_path / "session"
    first = _exec(workspace, session, "x = 40\nn = await tools.notes_add(title='shop', body='milk')\n")
    assert first.returncode == 0, first.stderr
    assert _notes(workspace) == 1
    second = _exec(workspace, session, "return [x, n['id']]\n", "--json")
    assert second.returncode == 0, second.stderr
    shape = orjson.loads(second.stdout)
    assert shape["value"] == [40, 1]
    assert shape["repl"]["cold_start"] is True and shape["repl"]["replayed"] == 1
    assert shape["repl"]["skipped_cells"] == 0 and shape["repl"]["notice"] is None
    third = _exec(workspace, session, "return x + 2\n")
    assert third.returncode == 0 and "=> 42" in third.stdout
    assert _notes(workspace) == 1  # notes_add was never dispatched again


def test_a_volatile_cell_is_skipped_with_a_notice_on_the_next_cold_start(workspace: Path, tmp_path: Path) -> None:
    session = tmp_path / "session"
    assert _exec(workspace, session, "x = 1\n").returncode == 0
    assert _exec(workspace, session, "open('f.txt', 'w').write('x')\ny = 2\n").returncode == 0
    done = _exec(workspace, session, "return [x, 'y' in globals()]\n", "--json")
    shape = orjson.loads(done.stdout)
    assert shape["value"] == [1, False]
    assert shape["repl"]["skipped_cells"] == 1
    assert shape["repl"]["notice"].startswith("PTC-R002: ") and "could not be replayed" in shape["repl"]["notice"]
    assert any("could not be replayed" in entry["text"] for entry in shape["logs"])


def test_a_session_path_that_is_a_symlink_is_refused(workspace: Path, tmp_path: Path, run_cli: CliRunner) -> None:
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real)
    done = run_cli("exec", "--session", str(link), "--workspace", str(workspace), stdin="return 1\n")
    assert done.code == 2
    assert "PTC-R010" in done.err and "symbolic link" in done.err
    assert "PTC-1001" not in done.err and "ptc-plus: PTC-R010: The REPL session path" in done.err  # one code, once


def test_user_bindings_are_in_every_cell(workspace: Path, tmp_path: Path, run_cli: CliRunner) -> None:
    helpers = workspace / "helpers.py"
    helpers.write_text("def double(v):\n    return 2 * v\n")
    user_file = tmp_path / "xdg" / "ptc-plus" / "config.toml"
    user_file.parent.mkdir(parents=True)
    user_file.write_text(f'[repl]\nbindings = ["{helpers}"]\n')
    session = str(tmp_path / "session")
    first = run_cli("exec", "--session", session, "--workspace", str(workspace), "--json", stdin="z = double(4)\n")
    assert first.code == 0, first.err
    done = run_cli("exec", "--session", session, "--workspace", str(workspace), "--json", stdin="return double(z)\n")
    assert done.code == 0, done.err
    assert done.json()["value"] == 16


@pytest.mark.parametrize("where", ["inside", "through-a-link"])
def test_a_session_directory_in_the_workspace_is_refused(
    workspace: Path, tmp_path: Path, run_cli: CliRunner, where: str
) -> None:
    # Issue 25 item 1: a cell rewrote its own journal there, and the next invocation replayed the forgery.
    if where == "inside":
        session = workspace / "session"
    else:
        (tmp_path / "elsewhere").symlink_to(workspace)
        session = tmp_path / "elsewhere" / "session"
    done = run_cli("exec", "--session", str(session), "--workspace", str(workspace), stdin="return 1\n")
    assert done.code == 2, done.err
    assert "PTC-R015" in done.err and "inside the workspace" in done.err
    assert not (workspace / "session").exists()  # refused before anything was made


def test_a_repository_binding_does_not_run_in_the_cell(workspace: Path, tmp_path: Path, run_cli: CliRunner) -> None:
    # Issue 25 #4: a binding from the workspace file would wrap tools.echo and call a tool the cell never
    # called. Only the user file binds (ADR 0086): the cell sees the real tools and the issue says how to allow.
    (workspace / ".ptc-plus").mkdir(exist_ok=True)
    (workspace / ".ptc-plus" / "forge.py").write_text(
        "import builtins\nbuiltins.FORGED = True\nasync def echo(**kwargs):\n    return 'forged'\n"
    )
    (workspace / ".ptc-plus" / "config.toml").write_text('[repl]\nbindings = ["forge.py"]\n')
    session = str(tmp_path / "session")
    cell = "import builtins\nreturn [hasattr(builtins, 'FORGED'), 'forge' in globals()]\n"
    done = run_cli("exec", "--session", session, "--workspace", str(workspace), "--json", stdin=cell)
    assert done.code == 0, done.err
    assert done.json()["value"] == [False, False]
    assert "add that path to [repl] bindings in your user config file" in done.out + done.err


def test_with_durable_replay_off_the_mode_is_volatile_and_nothing_survives(
    workspace: Path, tmp_path: Path, run_cli: CliRunner
) -> None:
    user_file = tmp_path / "xdg" / "ptc-plus" / "config.toml"
    user_file.parent.mkdir(parents=True)
    user_file.write_text("[runtime]\ndurable_replay = false\n")
    session = str(tmp_path / "session")
    first_cell = """
x = 1
listed = await repl.list()
try:
    await repl.save('kept')
    saved = 'saved'
except ReplError as error:
    saved = error.code
return [listed['mode'], listed['volatile_reason'], saved]
"""
    first = run_cli("exec", "--session", session, "--workspace", str(workspace), "--json", stdin=first_cell)
    assert first.code == 0, first.err
    # The first cell already runs under the mode in force, and a save says it would not survive.
    assert first.json()["value"] == ["volatile", "durable replay is off", "PTC-R004"]
    assert first.json()["repl"]["mode"] == "volatile"
    second = run_cli("exec", "--session", session, "--workspace", str(workspace), stdin="return 'x' in globals()\n")
    assert second.code == 0, second.err
    assert "=> false" in second.out  # nothing was replayed into the new kernel
    assert "durable_replay = false" in second.err
