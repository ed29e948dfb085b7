"""Suite-wide checks, markers and fixtures.

Tests that need bubblewrap carry ``@pytest.mark.needs_bwrap`` (the one marker
for it). They skip where bubblewrap is absent (a developer laptop without it).
``scripts/test`` installs bubblewrap when it can and then sets
``TESTS_REQUIRE_BWRAP=1``, so on CI a missing bubblewrap fails the run instead
of quietly skipping every confinement and escape test.

``run_cli`` runs ``ptc-plus`` in this process and captures what it printed; ``workspace`` is an empty
directory. The rest of what tests stand on (their own environment, the installed command) is in
``tests/scaffolding.py`` (ADR 0113).
"""

from __future__ import annotations

import io
import os
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from tests.cli_runner import CliRun, CliRunner

# The reference host's fixtures are opt-in (as tox's are): installing ptc-plus loads nothing into
# other projects' pytest runs; a project that wants them names the plugin, as we do here.
pytest_plugins = ["hookspecs.reference.pytest_plugin"]


# A property's verdict must not depend on the machine's speed (CI may run on a loaded 2-core machine):
# no per-example deadline and no too_slow health check anywhere, unless a test asks for one itself.
settings.register_profile("suite", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("suite")

BWRAP_REQUIRED = "TESTS_REQUIRE_BWRAP"
_SCRATCH_CACHE: list[str] = []


def pytest_configure(config: pytest.Config) -> None:
    # The catalog disk cache (ADR 0078) of every test and the subprocesses it starts goes to a scratch
    # directory, never to the developer's own ~/.cache/ptc-plus (a test that wants another sets its own).
    # Under the machine's temporary directory, never under a parent process's private one (pytest-xdist's
    # workers inherit its TMPDIR): paths stay short, as AF_UNIX socket paths must.
    root = os.environ.setdefault("PYTEST_DEBUG_TEMPROOT", tempfile.gettempdir())
    _SCRATCH_CACHE[:] = [tempfile.mkdtemp(prefix="ptc-plus-test-cache-", dir=root)]
    scratch = Path(_SCRATCH_CACHE[0])
    os.environ["PTC_PLUS_CACHE_DIR"] = str(scratch)
    # Likewise the user state (MCP tools/list snapshots, ADR 0097); isolated tests get their own per test.
    os.environ["XDG_STATE_HOME"] = str(scratch / "state")
    _private_temporary_directory(scratch / "tmp")
    config.addinivalue_line(
        "markers", f"needs_bwrap: needs bubblewrap; skipped without it, a failure when {BWRAP_REQUIRED}=1"
    )


def _private_temporary_directory(path: Path) -> None:
    """Point this process's (and its children's) temporary directory at ``path`` (ADR 0124).

    The suite runs in parallel (pytest-xdist, one process per core) on machines where other people run
    ``ptc-plus`` too. What the product keeps at one fixed place per user in the temporary directory (the
    evaluation's run directory and its lock, ``ptc-plus-eval-<uid>``; the sweep of stale scratch state
    directories) is then shared by every process: a test's ``ptc-plus eval`` waited for another worker's,
    or for someone's minutes-long evaluation. pytest's own ``tmp_path`` stays under the machine's
    (``PYTEST_DEBUG_TEMPROOT``, set by the caller), kept after a run for a reader, as pytest keeps it.
    """
    # As the machine's is: sticky and open to every user (a test drops to another uid and its host keeps
    # files there); the scratch above it only traversable.
    path.parent.chmod(0o711)
    path.mkdir()
    path.chmod(0o1777)
    os.environ["TMPDIR"] = str(path)
    tempfile.tempdir = None  # gettempdir() caches its answer: ask again


def pytest_unconfigure(config: pytest.Config) -> None:
    if _SCRATCH_CACHE:
        shutil.rmtree(_SCRATCH_CACHE[0], ignore_errors=True)


def pytest_sessionstart(session: pytest.Session) -> None:
    if os.environ.get(BWRAP_REQUIRED) == "1" and shutil.which("bwrap") is None:
        raise pytest.UsageError(f"{BWRAP_REQUIRED}=1 but bwrap is not on PATH: the sandbox tests would all skip")


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("needs_bwrap") is None or shutil.which("bwrap") is not None:
        return
    if os.environ.get(BWRAP_REQUIRED) == "1":  # PATH changed under the run: still a failure, never a skip
        pytest.fail(f"{BWRAP_REQUIRED}=1 but bwrap is not on PATH", pytrace=False)
    pytest.skip("bubblewrap is not installed (scripts/test installs it)")


@pytest.fixture
def run_cli(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    """Run ``ptc-plus`` in this process (``ptc_plus.cli.main``) with ``stdin`` as its standard input."""
    from ptc_plus.cli import main  # imported when used: hookspecs-only runs need not load the plugin

    def run(*argv: str, stdin: str = "") -> CliRun:
        capsys.readouterr()  # only this invocation's output
        monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
        code = main(list(argv))
        captured = capsys.readouterr()
        return CliRun(code=code, out=captured.out, err=captured.err)

    return run


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """An empty workspace directory, ``tmp_path/workspace``, resolved (a directory's own fixture may fill one)."""
    path = tmp_path / "workspace"
    path.mkdir()
    return path.resolve()
