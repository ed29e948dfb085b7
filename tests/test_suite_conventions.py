"""The suite's own conventions.

Tests mirror the packages under one root (``tests/ptc_plus/<subpackage>``,
``tests/hookspecs/<subpackage>``); one ``needs_bwrap`` marker fails instead of
skipping when CI requires bubblewrap.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = "import pytest\n\n\n@pytest.mark.needs_bwrap\ndef test_confined():\n    pass\n"


def _pytest(project: Path, path: str, **env: str) -> subprocess.CompletedProcess[str]:
    # The suite's conftest loaded as a plugin over a one-test project, in a fresh interpreter.
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "tests.conftest", str(project)],
        cwd=project,
        env={"PATH": path, "PYTHONPATH": str(ROOT), "LANG": "C.UTF-8", **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "test_sample.py").write_text(SAMPLE, encoding="utf-8")
    return tmp_path


def test_needs_bwrap_skips_where_bwrap_is_missing(project: Path) -> None:
    done = _pytest(project, str(project / "no-bin"))
    assert done.returncode == 0 and "1 skipped" in done.stdout, done.stdout + done.stderr


def test_needs_bwrap_fails_the_run_when_ci_requires_bwrap(project: Path) -> None:
    done = _pytest(project, str(project / "no-bin"), TESTS_REQUIRE_BWRAP="1")
    assert done.returncode != 0
    assert "TESTS_REQUIRE_BWRAP=1 but bwrap is not on PATH" in done.stdout + done.stderr


@pytest.mark.needs_bwrap
def test_needs_bwrap_runs_where_bwrap_is_installed(project: Path) -> None:
    done = _pytest(project, os.environ.get("PATH", "/usr/bin:/bin"))
    assert done.returncode == 0 and "1 passed" in done.stdout, done.stdout + done.stderr
    assert shutil.which("bwrap") is not None


def test_no_test_module_defines_its_own_bwrap_condition() -> None:
    own = re.compile(r"needs_bwrap\s*=|skipif\([^)]*bwrap", re.DOTALL)
    assert sorted(str(p.relative_to(ROOT)) for p in (ROOT / "tests").rglob("*.py") if own.search(p.read_text())) == []


SHARED = {"data", "plugins"}
"""Directories under ``tests/`` that hold no tests of their own: data, and the test plugin (never installed)."""
SUITES = {"tests/ptc_plus/runtime/hostile"}
"""Deeper directories that group one package's tests by theme rather than by module."""


def _test_dirs(root: Path) -> list[Path]:
    return sorted(p for p in root.iterdir() if p.is_dir() and p.name != "__pycache__")


def test_tests_mirror_the_packages() -> None:
    tests = ROOT / "tests"
    assert {p.name for p in _test_dirs(tests)} - SHARED == {"hookspecs", "ptc_plus"}
    strays = []
    for package in ("hookspecs", "ptc_plus"):
        for folder in _test_dirs(tests / package):
            if not (ROOT / package / folder.name / "__init__.py").exists():
                strays.append(str(folder.relative_to(ROOT)))
            strays += [
                str(deeper.relative_to(ROOT))
                for deeper in folder.rglob("*")
                if deeper.is_dir()
                and deeper.name != "__pycache__"
                and str(deeper.relative_to(ROOT)) not in SUITES
                # a deeper folder mirroring a sub-subpackage (tests/ptc_plus/runtime/kernel) is no stray
                and not (ROOT / deeper.relative_to(tests) / "__init__.py").exists()
            ]
    assert sorted(strays) == []


def test_environment_isolation_is_written_once() -> None:
    """What the machine sets is dropped in ``tests/scaffolding.py`` only (ADR 0113): a copy elsewhere drifts."""
    own = re.compile(r"""startswith\(\(?["']PTC_""")
    copies = [p for p in (ROOT / "tests").rglob("*.py") if p.name != "scaffolding.py" and own.search(p.read_text())]
    assert sorted(str(p.relative_to(ROOT)) for p in copies) == []


def test_no_module_defines_the_empty_workspace_again() -> None:
    """The empty ``workspace`` fixture is suite-wide (``tests/conftest.py``); a module's own one fills it."""
    again = re.compile(
        r"def workspace\(tmp_path: Path\) -> Path:\n(?:    .*\n)*?    \w+\.mkdir\(\)\n    return [\w.()]+\n"
    )
    copies = [p for p in (ROOT / "tests" / "ptc_plus").rglob("*.py") if again.search(p.read_text())]
    assert sorted(str(p.relative_to(ROOT)) for p in copies) == []


def test_each_test_process_has_a_temporary_directory_of_its_own() -> None:
    """The suite runs in parallel beside other people's ``ptc-plus`` (ADR 0124): what the product keeps at one
    fixed place of the temporary directory (the evaluation's run directory and its lock) is this process's."""
    from ptc_plus.cli.eval import run_directory

    machine = Path(os.environ["PYTEST_DEBUG_TEMPROOT"]).resolve()
    mine = Path(tempfile.gettempdir()).resolve()
    assert os.environ["TMPDIR"] == tempfile.gettempdir()
    assert mine != machine and machine in mine.parents
    assert stat.S_IMODE(mine.stat().st_mode) == 0o1777 and mine.stat().st_uid == os.geteuid()  # as /tmp is
    with run_directory() as runs:
        assert runs.parent.resolve() == mine
    assert (mine / f"{runs.name}.lock").is_file()


def test_parallel_workers_are_given_their_own_temporary_directories(tmp_path: Path) -> None:
    """Two pytest-xdist workers over the suite's conftest: each its own temporary directory, none the parent's."""
    for n in range(4):
        (tmp_path / f"test_where_{n}.py").write_text(
            "import os, tempfile\n\n\n"
            f"def test_where_{n}():\n"
            "    with open(os.environ['WHERE'], 'a') as out:\n"
            "        out.write(tempfile.gettempdir() + '\\n')\n",
            encoding="utf-8",
        )
    where = tmp_path / "where.txt"
    argv = ["-q", "-p", "no:cacheprovider", "-p", "tests.conftest", "-n", "2", "--dist", "loadfile", str(tmp_path)]
    done = subprocess.run(
        [sys.executable, "-m", "pytest", *argv],
        cwd=tmp_path,
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": str(ROOT), "LANG": "C.UTF-8"}
        | {"WHERE": str(where), "TMPDIR": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    seen = set(where.read_text(encoding="utf-8").split())
    assert len(seen) == 2, seen  # the two workers', one each
    assert all(Path(d).parent.parent == tmp_path for d in seen), seen  # scratch under the machine's, not nested
