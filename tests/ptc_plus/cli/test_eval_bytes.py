"""``ptc-plus eval`` from two clones under two ``TMPDIR``\\ s writes the same bytes (issue 27, "Must show").

Each clone is a copy of ``benchmarks/`` (both suites) in a directory of its
own length, run from its root with its own temporary directory; the same
``SOURCE_DATE_EPOCH`` fixes the one value that is meant to differ (when it was
measured). One clone runs one run at a time, the other three side by side
(``--jobs``, ADR 0119). A tiny matrix of both suites (one task each, two
styles, two catalog sizes, BFCL's own catalog among them): the results files,
the README and the charts must be identical byte for byte.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from benchmarks.bfcl import wheel
from tests.ptc_plus.cli.test_chat import CLI

REPOSITORY = Path(__file__).resolve().parents[3]
EPOCH = "1796083200"  # 2026-12-01T00:00:00Z


def measure(root: Path, tmpdir: Path, bfcl_wheel: Path, jobs: int) -> dict[str, bytes]:
    shutil.copytree(
        REPOSITORY / "benchmarks", root / "benchmarks", ignore=shutil.ignore_patterns("__pycache__", "results")
    )
    tmpdir.mkdir(parents=True)
    env = {**os.environ, "TMPDIR": str(tmpdir), "SOURCE_DATE_EPOCH": EPOCH, wheel.WHEEL_ENV: str(bfcl_wheel)}
    args = ["eval", "--suite", "all", "--task", "t09-one-call", "--task", "multi-turn-base-0"]
    args += ["--style", "native", "--style", "ptc-plus-cold", "--catalog", "0", "--catalog", "200", "--out", "out"]
    args += ["--jobs", str(jobs)]  # one process or runs side by side (ADR 0119): the same bytes
    done = subprocess.run([CLI, *args], cwd=root, env=env, capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return {path.name: path.read_bytes() for path in sorted((root / "out").iterdir())}


@pytest.mark.slow
@pytest.mark.needs_bwrap
def test_two_clones_under_different_tmpdirs_write_byte_identical_results_report_and_charts(tmp_path: Path) -> None:
    bfcl_wheel = wheel.find_wheel()
    first = measure(tmp_path / "c", tmp_path / "t", bfcl_wheel, 1)
    second = measure(
        tmp_path / "another-clone-of-the-repository", tmp_path / "a-much-longer-temporary-directory", bfcl_wheel, 3
    )
    assert {"results.json", "results-bfcl.json", "README.md"} <= set(first)
    assert b"2026-12-01T00:00:00+00:00" in first["results.json"]
    assert sorted(first) == sorted(second)
    for name in first:
        assert first[name] == second[name], name
