"""The README's test command, alone, in a fresh clone of the repository (issue 10).

Slow: the clone installs the project into its own ``.venv`` and runs the whole
default suite. That inner run is the default suite, which excludes slow tests,
so this test does not run itself again; ``NESTED`` makes a recursion fail fast
instead of cloning forever should that ever change.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NESTED = "PTC_PLUS_IN_FRESH_CLONE_TEST"
# Set by whoever runs the outer pytest; the inner run must see only what a reader's shell has.
NOT_INHERITED = {"PYTEST_ADDOPTS", "PYTHONPATH", "VIRTUAL_ENV", "PYTEST_DEBUG_TEMPROOT"}


def readme_command(repo: Path, marker: str) -> str:
    """The README command under ``<!-- marker -->``, read by the script ``.ci/run`` uses."""
    done = subprocess.run(
        [str(repo / ".ci" / "readme-command"), marker], capture_output=True, text=True, check=True, timeout=60
    )
    return done.stdout.strip()


@pytest.mark.slow
def test_the_readme_test_command_passes_alone_in_a_fresh_clone(tmp_path: Path) -> None:
    assert NESTED not in os.environ, "the fresh-clone test ran inside its own inner run"
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True, timeout=300)
    command = readme_command(clone, "test-command")
    env = {key: value for key, value in os.environ.items() if key not in NOT_INHERITED}
    env["TMPDIR"] = os.environ["PYTEST_DEBUG_TEMPROOT"]  # the machine's, not this test process's own (ADR 0124)
    done = subprocess.run(
        ["bash", "-c", command],
        cwd=clone,
        env={**env, NESTED: "1"},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=3600,
    )
    assert done.returncode == 0, f"`{command}` in a fresh clone exited {done.returncode}:\n{done.stdout[-6000:]}"
