"""What tests stand on: a workspace, an environment of their own, and the installed ``ptc-plus`` (ADR 0113).

- :func:`isolate_from_the_machine` gives an in-process test its own environment (``monkeypatch``);
  :func:`clean_environment` is the same environment as a mapping, for a child process.
- :func:`run_installed` runs the installed console script in a subprocess. A test uses it only where a
  real process is the point (the entry point itself, exit codes on a real terminal, signals, a killed
  process, import isolation); anything else goes through the in-process ``run_cli`` fixture, which calls
  the same ``ptc_plus.cli.main`` the console script calls.
- The ``workspace`` fixture (``tests/conftest.py``) is an empty directory, ``tmp_path/workspace``, resolved.

What a developer's machine sets must not leak into a test: every ``PTC_*`` and ``_PTC_PLUS*`` variable
(and shell completion's ``COMP_*``) is dropped, and the user config and state live under ``tmp_path``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from tests.cli_runner import CliRun

INSTALLED = Path(sys.executable).with_name("ptc-plus")
"""The console script ``pip install`` put next to this interpreter."""

_MACHINE_PREFIXES = ("PTC_", "_PTC_PLUS", "COMP_")


def _user_dirs(tmp_path: Path) -> dict[str, str]:
    return {"XDG_CONFIG_HOME": str(tmp_path / "xdg"), "XDG_STATE_HOME": str(tmp_path / "xdg-state")}


def isolate_from_the_machine(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """Unset every ``PTC_*`` variable and point ``XDG_CONFIG_HOME`` at ``tmp_path/xdg`` (returned, not created).

    The user config file is then ``<returned>/ptc-plus/config.toml``, absent until a test writes it. The user
    state (the MCP servers' ``tools/list`` snapshots, ADR 0097) goes to ``tmp_path/xdg-state``: one test's
    snapshot never spares another test's server its start.
    """
    for key in list(os.environ):
        if key.startswith(_MACHINE_PREFIXES):
            monkeypatch.delenv(key)
    for key, value in _user_dirs(tmp_path).items():
        monkeypatch.setenv(key, value)
    return tmp_path / "xdg"


def clean_environment(tmp_path: Path, **settings: str) -> dict[str, str]:
    """This process's environment as :func:`isolate_from_the_machine` leaves it, for a child: ``settings`` on top.

    The locale is English unless ``settings`` says otherwise.
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith(_MACHINE_PREFIXES)}
    return env | _user_dirs(tmp_path) | {"PTC_LOCALE": "en"} | settings


def run_installed(
    argv: Sequence[str],
    env: Mapping[str, str],
    *,
    cwd: Path,
    stdin: str = "",
    timeout: float = 300,
) -> CliRun:
    """Run the installed ``ptc-plus`` with ``argv``; what it returned and printed.

    ``timeout`` is a hang guard, not a timing claim: generous, so a loaded machine's interpreter start-up
    (imports and all) never decides a verdict.
    """
    done = subprocess.run(
        [str(INSTALLED), *argv],
        input=stdin,
        capture_output=True,
        text=True,
        env=dict(env),
        cwd=cwd,
        timeout=timeout,
        check=False,
    )
    return CliRun(code=done.returncode, out=done.stdout, err=done.stderr)
