"""``--jobs``: the matrix's runs side by side in worker processes give the records of one process (ADR 0119)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ptc_plus.evaluation.matrix import run_matrix
from ptc_plus.evaluation.results import Results
from ptc_plus.evaluation.task import Style
from tests.ptc_plus.evaluation.tiny_suite import CHILD, LONG_TAIL, ONE_CALL, SUITE

STYLES = (Style.NATIVE, Style.PTC, Style.PTC_PLUS_COLD, Style.PTC_PLUS_MATURE)


def suite_package(tmp_path: Path) -> Path:
    """The tiny suite as a directory ``load_suite`` reads (what a worker loads the suite from)."""
    package = tmp_path / "tiny"
    package.mkdir()
    (package / "__init__.py").write_text("from tests.ptc_plus.evaluation.tiny_suite import SUITE\n")
    return package


async def measure(workdir: Path, jobs: int, package: Path) -> Results:
    workdir.mkdir(parents=True)
    return await run_matrix(
        SUITE,
        tasks=(ONE_CALL, LONG_TAIL, CHILD),
        styles=STYLES,
        catalogs=(20, 40),
        workdir=workdir,
        warmup_families=2,
        jobs=jobs,
        suite_directory=package,
    )


@pytest.mark.asyncio
@pytest.mark.needs_bwrap
async def test_runs_side_by_side_give_the_records_of_one_process_in_its_order(tmp_path: Path) -> None:
    package = suite_package(tmp_path)
    alone = await measure(tmp_path / "alone", 1, package)
    ticks: list[str] = []
    side = await run_matrix(
        SUITE,
        tasks=(ONE_CALL, LONG_TAIL, CHILD),
        styles=STYLES,
        catalogs=(20, 40),
        workdir=tmp_path / "side",
        warmup_families=2,
        jobs=3,
        suite_directory=package,
        progress=lambda record: ticks.append(record.task),
    )
    assert all(run.passed for run in alone.runs), [r.reason for r in alone.runs if not r.passed]
    # Every count, verdict and the order: the same records (the mature runs from their worker's warm-up too).
    assert side.runs == alone.runs
    assert sorted(ticks) == sorted(run.task for run in alone.runs)
    assert {run.style for run in side.runs} == {style.value for style in STYLES}
