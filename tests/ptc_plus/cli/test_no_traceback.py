"""No Python traceback reaches a user: every command, with every bad input a user can cause (issue 10, item 3).

The walk covers every command :func:`ptc_plus.cli.build_cli` registers,
found recursively, so a command added later is walked without editing this
file. Each case runs in English and in Chinese and must print a
``PTC-xxxx`` code and no ``Traceback``. Every case runs in this process
(``run_cli``, the function the installed command calls); the cases that need
a reader without root's right to ignore file modes run in a thread that gave
it up (``tests/privileges.py``). A few run the installed ``ptc-plus`` in a
subprocess as well, where a real process is the point (:data:`IN_A_PROCESS`):
the console script's exit code and streams, and a process that lost root's
override from its start (ADR 0113).

Cases:

- an unknown option, and (where the command has required parameters) none of them: exit 2, ``PTC-1001``;
- ``--workspace`` naming a file or a missing directory: exit 2, ``PTC-1002``, nothing created;
- a workspace config that is not UTF-8, that is a directory, that cannot be read, or whose
  ``.ptc-plus`` is a file (for a writer such as ``capabilities set``, a failed write);
- for a writer, a workspace directory it may not write to (mode 0555, run without root's override);
- a user config that is not UTF-8.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from contextlib import nullcontext
from pathlib import Path

import attrs
import click
import pytest

from ptc_plus.cli import build_cli
from tests.cli_runner import CliRun, CliRunner
from tests.privileges import dac_override_dropped, without_dac_override
from tests.scaffolding import clean_environment

CLI = str(Path(sys.executable).with_name("ptc-plus"))
TOOLS = Path(__file__).resolve().parents[2] / "data" / "mcp" / "time.json"
CODE = re.compile(r"PTC-\d{4}")
LOCALES = ("en", "zh")

SAMPLE_ARGUMENTS: dict[tuple[str, ...], list[str]] = {
    ("gate",): ["--user", "alice"],
    ("sdk",): ["--tools", str(TOOLS)],
    ("capabilities", "search"): ["read a file"],
    ("capabilities", "set"): ["host:read_file", "off"],
    ("completion",): ["bash"],
    ("mcp", "add"): ["time", "mcp-server-time"],
    ("mcp-serve",): ["--check"],  # serving would wait for a client on stdin: the check opens the same session
    ("settings",): ["--check"],  # serving would wait for Ctrl-C: the check builds the same page once
    # One-shot against a closed port: the session opens as in use, the model endpoint fails at once (PTC-7304).
    ("chat",): ["-p", "hello", "--model", "m", "--base-url", "http://127.0.0.1:1/v1", "--retries", "0"],
}
"""Arguments that make a well-formed invocation; a command not listed gets ``x`` for each required parameter."""

WRITERS = {("capabilities", "set"), ("config", "init"), ("mcp", "add")}
"""Commands that write into the workspace: they also meet a workspace they may not write to."""

IN_A_PROCESS: frozenset[tuple[tuple[str, ...], str]] = frozenset(
    {
        ((), "unknown-option"),  # the console script: click's usage error becomes the process's exit 2
        (("exec",), "workspace-missing"),  # the front door's own refusal, seen as a user's shell sees it
        (("config", "show"), "config-unreadable"),  # a process that never had root's right to read
        (("config", "init"), "workspace-read-only"),  # ... nor to write into a directory of mode 0555
    }
)
"""(command, case) also run as the installed ``ptc-plus`` in a subprocess (in both locales)."""

NEEDS_FILE_MODES = {"config-unreadable", "workspace-read-only"}
"""Cases whose reader must be refused by file modes: run where root's override is gone."""

KNOWN_FAILURES: dict[tuple[tuple[str, ...], str], str] = {}
"""(command, case) -> why it fails today, naming the file that owns the fix (strict xfail: a fix must remove it)."""


@attrs.frozen
class Case:
    command: tuple[str, ...]
    name: str
    subprocess: bool = False

    @property
    def id(self) -> str:
        return f"{' '.join(self.command) or 'ptc-plus'}:{self.name}{':subprocess' if self.subprocess else ''}"


def _commands(group: click.Group, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], click.Command]]:
    yield path, group
    for name, command in group.commands.items():
        if isinstance(command, click.Group):
            yield from _commands(command, (*path, name))
        else:
            yield (*path, name), command


COMMANDS = dict(_commands(build_cli()))


def _has_workspace(command: click.Command) -> bool:
    return any(isinstance(p, click.Option) and "--workspace" in p.opts for p in command.params)


def _required(command: click.Command) -> bool:
    return not isinstance(command, click.Group) and any(p.required for p in command.params)


def _sample(path: tuple[str, ...]) -> list[str]:
    if path in SAMPLE_ARGUMENTS:
        return list(SAMPLE_ARGUMENTS[path])
    command, args = COMMANDS[path], []
    for param in command.params:
        if param.required and isinstance(param, click.Argument):
            args.append("x")
        elif param.required and isinstance(param, click.Option):
            args += [param.opts[0], "x"]
    return args


def _cases() -> Iterator[Case]:
    for path, command in COMMANDS.items():
        workspace = _has_workspace(command)
        names = ["unknown-option"]
        if _required(command):
            names.append("missing-argument")
        if workspace:
            names += ["workspace-is-a-file", "workspace-missing", "config-not-utf8", "config-is-a-directory"]
            names += ["config-unreadable", "dot-ptc-plus-is-a-file", "user-config-not-utf8"]
        if path in WRITERS:
            names.append("workspace-read-only")
        for name in names:
            yield Case(path, name)
            if (path, name) in IN_A_PROCESS:
                yield Case(path, name, subprocess=True)


def _params() -> Iterator[object]:
    for case in _cases():
        for lang in LOCALES:
            why = KNOWN_FAILURES.get((case.command, case.name))
            marks = [pytest.mark.xfail(strict=True, reason=why)] if why else []
            yield pytest.param(case, lang, id=f"{case.id}:{lang}", marks=marks)


@attrs.frozen
class Setup:
    argv: list[str]
    exit_codes: tuple[int, ...]
    code: str | None
    must_not_exist: Path | None = None


def _prepare(case: Case, root: Path) -> Setup:
    """Create what the case needs under ``root`` and say what the run must show."""
    path = case.command
    workspace = root / "ws"
    workspace.mkdir()
    config = workspace / ".ptc-plus" / "config.toml"
    base = [*path, *_sample(path)]
    if case.name == "unknown-option":
        return Setup([*base, "--no-such-option"], (2,), "PTC-1001")
    if case.name == "missing-argument":
        return Setup(list(path), (2,), "PTC-1001")
    if case.name == "workspace-is-a-file":
        (root / "file").write_text("mine\n", "utf-8")
        return Setup([*base, "--workspace", str(root / "file")], (2,), "PTC-1002")
    if case.name == "workspace-missing":
        missing = root / "nope"
        return Setup([*base, "--workspace", str(missing / "ws")], (2,), "PTC-1002", must_not_exist=missing)
    with_workspace = [*base, "--workspace", str(workspace)]
    if case.name == "config-not-utf8":
        config.parent.mkdir()
        config.write_bytes(b"version = 1\n# caf\xe9 latin-1\n")
    elif case.name == "config-is-a-directory":
        config.mkdir(parents=True)
    elif case.name == "config-unreadable":
        config.parent.mkdir()
        config.write_text("version = 1\n", "utf-8")
        config.chmod(0)
    elif case.name == "dot-ptc-plus-is-a-file":
        config.parent.write_text("not a directory\n", "utf-8")
    elif case.name == "workspace-read-only":
        workspace.chmod(0o555)  # read-only for the child, which runs without root's override of file modes
    elif case.name == "user-config-not-utf8":
        user = root / "xdg" / "ptc-plus" / "config.toml"
        user.parent.mkdir(parents=True)
        user.write_bytes(b"\xff\xfeversion = 1\n")
    else:
        raise AssertionError(case.name)
    return Setup(with_workspace, (0, 1, 2), None)


def _run_subprocess(argv: list[str], env: dict[str, str], cwd: Path) -> CliRun:
    done = subprocess.run(
        [CLI, *argv],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        timeout=180,
        preexec_fn=without_dac_override,
    )
    return CliRun(code=done.returncode, out=done.stdout, err=done.stderr)


@pytest.mark.parametrize(("case", "lang"), list(_params()))
def test_no_traceback(
    case: Case, lang: str, tmp_path: Path, run_cli: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    setup = _prepare(case, tmp_path)
    env = clean_environment(tmp_path, PTC_LOCALE=lang, HOME=str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path / "ws")
    if case.subprocess:
        done = _run_subprocess(setup.argv, env, tmp_path / "ws")
    else:
        for key in [k for k in os.environ if k not in env]:
            monkeypatch.delenv(key)
        for key, value in env.items():
            monkeypatch.setenv(key, value)
        try:
            with dac_override_dropped() if case.name in NEEDS_FILE_MODES else nullcontext():
                done = run_cli(*setup.argv)
        except BaseException as escaped:  # what a user would see as a traceback
            pytest.fail(f"Traceback: {type(escaped).__name__}: {escaped}")
    shown = done.out + done.err
    assert "Traceback" not in shown, shown
    assert done.code in setup.exit_codes, shown
    found = CODE.findall(shown)
    assert found, f"no PTC-xxxx code in: {shown!r}"
    assert "PTC-1000" not in found, f"an internal error (a bug) answered a user's mistake: {shown!r}"
    if setup.code is not None:
        assert setup.code in found, shown
        usage, hint = ("Usage: ", "Try '") if lang == "en" else ("用法: ", "运行 '")
        assert done.err.startswith(usage) and f"\n{hint}ptc-plus" in done.err, "a usage error shows usage and a hint"
    if setup.must_not_exist is not None:
        assert not setup.must_not_exist.exists(), "a bad --workspace created a directory"
    if case.name == "workspace-is-a-file":
        assert (tmp_path / "file").read_text("utf-8") == "mine\n"


def test_every_real_process_case_is_in_the_walk() -> None:
    walked = {(case.command, case.name) for case in _cases() if case.subprocess}
    assert walked == IN_A_PROCESS, "a name in IN_A_PROCESS that the walk never makes runs nothing"


def test_the_walk_reaches_every_command() -> None:
    names = {" ".join(path) for path in COMMANDS}
    assert {"demo", "sdk", "capabilities plan", "capabilities search", "capabilities set", "plugins", "gate"} <= names
    assert "completion" in names
