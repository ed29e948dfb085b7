"""The BFCL suite inside the evaluation (ADR 0106): its catalogs, its warm-up folds, a tiny matrix, the report.

The suite is loaded as ``ptc-plus eval`` loads it: by path, through its
``load()`` (the pinned wheel from ``PTC_PLUS_BFCL_WHEEL`` or the test cache,
downloaded once). The matrix here is tiny (two tasks, two styles, two catalog
sizes); the full run is not a test.
"""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest

from benchmarks.bfcl import wheel
from ptc_plus.evaluation import suite_report, suites
from ptc_plus.evaluation.charts import ChartOutcome
from ptc_plus.evaluation.driver import RUN_CODE, TOOL_SEARCH
from ptc_plus.evaluation.errors import DuplicateToolName
from ptc_plus.evaluation.loading import load_suite
from ptc_plus.evaluation.matrix import run_matrix
from ptc_plus.evaluation.runner import catalog_tools
from ptc_plus.evaluation.task import OWN_CATALOG, Style, Suite

BFCL_DIRECTORY = Path(__file__).resolve().parents[3] / "benchmarks" / "bfcl"
SKIPPED = ChartOutcome(skipped="Charts were skipped.")


@pytest.fixture(scope="module")
def suite(monkeypatch_module: pytest.MonkeyPatch) -> Suite:
    monkeypatch_module.setenv(wheel.WHEEL_ENV, str(wheel.find_wheel()))
    return load_suite(BFCL_DIRECTORY)


@pytest.fixture(scope="module")
def monkeypatch_module() -> pytest.MonkeyPatch:
    patch = pytest.MonkeyPatch()
    yield patch  # type: ignore[misc]
    patch.undo()


def own_tools(suite: Suite, task_id: str) -> list[str]:
    task = next(t for t in suite.tasks if t.id == task_id)
    world = suite.world(Path("/nonexistent"))
    task.setup(Path("/nonexistent"), world)
    return [d.spec.name for d in suite.tools(Path("/nonexistent"), world)]


def names(suite: Suite, task_id: str, catalog: int) -> list[str]:
    task = next(t for t in suite.tasks if t.id == task_id)
    world = suite.world(Path("/nonexistent"))
    task.setup(Path("/nonexistent"), world)
    return [d.spec.name for d in catalog_tools(suite, suite.tools(Path("/nonexistent"), world), catalog, [], task)]


def test_the_suite_loads_by_path_with_its_source_and_no_mcp_tools(suite: Suite) -> None:
    assert len(suite.tasks) == 199
    assert suite.version.startswith("bfcl-2026.3.23-")
    assert wheel.SHA256 in suite.source and "Apache License 2.0" in suite.source
    assert not suite.mcp  # a BFCL task's catalog is its classes' functions, not our MCP time server's


@pytest.mark.parametrize("catalog", [OWN_CATALOG, 200, 2000])
def test_each_task_has_its_own_catalog_then_distractors_for_its_classes_never_a_harness_tools_name(
    suite: Suite, catalog: int
) -> None:
    for task_id in ("multi-turn-base-0", "multi-turn-base-120", "multi-turn-base-199"):
        own = own_tools(suite, task_id)
        made = names(suite, task_id, catalog)
        assert made[: len(own)] == own
        assert len(made) == (len(own) if catalog == OWN_CATALOG else catalog)
        assert len(set(made)) == len(made)
        # The distractor pool has a `tool_search` of its own: it would collide with tool search's tool.
        assert TOOL_SEARCH not in made and RUN_CODE not in made


def test_a_catalog_tool_named_as_a_harness_tool_is_refused(suite: Suite) -> None:
    task = suite.tasks[0]
    world = suite.world(Path("/nonexistent"))
    task.setup(Path("/nonexistent"), world)
    own = suite.tools(Path("/nonexistent"), world)
    renamed = attrs.evolve(own[0], spec=attrs.evolve(own[0].spec, name=TOOL_SEARCH))
    with pytest.raises(DuplicateToolName):
        catalog_tools(suite, [*own[1:], renamed], OWN_CATALOG, [], task)


def test_the_mature_styles_warm_up_on_the_other_fold_never_on_the_task_itself(suite: Suite) -> None:
    sets = {task.id: suite.warmup_of(task) for task in suite.tasks}
    for task in suite.tasks:
        warm = sets[task.id]
        assert len(warm) == 10 and task.id not in {t.id for t in warm}
    assert len({tuple(t.id for t in warm) for warm in sets.values()}) == 2  # one set per fold
    # Spread over the file, not its first class's tasks: the sets reach the last tasks too.
    assert max(int(t.id.rsplit("-", 1)[1]) for t in sets[suite.tasks[0].id]) > 150


def test_the_default_sample_is_spread_over_the_suite_and_in_one_fold(suite: Suite) -> None:
    sample = suites.spread(suite.tasks, suites.DEFAULT_BFCL_SAMPLE)
    assert [suite.tasks.index(t) for t in sample] == list(range(0, 199, 20))
    assert len({tuple(t.id for t in suite.warmup_of(task)) for task in sample}) == 1  # one warm-up per size
    assert suites.spread(suite.tasks, 0) == suite.tasks == suites.spread(suite.tasks, 500)


@pytest.mark.asyncio
@pytest.mark.needs_bwrap
async def test_a_tiny_bfcl_matrix_runs_every_style_kind_at_its_own_catalog_and_with_distractors(
    suite: Suite, tmp_path: Path
) -> None:
    tasks = [t for t in suite.tasks if t.id in ("multi-turn-base-0", "multi-turn-base-2")]
    measured = await run_matrix(
        suite,
        tasks=tasks,
        styles=(Style.NATIVE, Style.PTC_PLUS_MATURE),
        catalogs=(OWN_CATALOG, 200),
        workdir=tmp_path,
        warmup_families=1,
    )
    assert measured.source == suite.source and measured.catalogs == (OWN_CATALOG, 200)
    for record in measured.runs:
        assert record.passed, record
        assert record.total and record.requests > 1
    by = {(r.task, r.style, r.catalog): r for r in measured.runs}
    # 200 tools cost native more than its own catalog; PTC Plus keeps most of the catalog out of the prompt.
    native_growth = (by["multi-turn-base-0", "native", 200].first_request_input or 0) - (
        by["multi-turn-base-0", "native", OWN_CATALOG].first_request_input or 0
    )
    mature_growth = (by["multi-turn-base-0", "ptc-plus-mature", 200].first_request_input or 0) - (
        by["multi-turn-base-0", "ptc-plus-mature", OWN_CATALOG].first_request_input or 0
    )
    assert native_growth > 170 * 20  # the distractors' schemas are in native's first request
    assert native_growth > mature_growth

    text = suite_report.render(
        [
            suite_report.Section(
                title=suites.BFCL.title, results_file="results-bfcl.json", results=measured, charts=SKIPPED
            )
        ]
    )
    assert f"## {suites.BFCL.title}" in text and "### Each task's own catalog" in text
    assert "| own | ptc-plus-mature / native |" in text
    assert f"Tasks: {suite.source}." in text
