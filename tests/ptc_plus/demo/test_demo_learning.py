"""Each ``ptc-plus demo --workspace W`` run is one family recorded in W: repeated runs show the plan learning."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from ptc_plus.demo import View, run_demo
from ptc_plus.i18n import message
from ptc_plus.statistics import user_store, workspace_store
from tests.scaffolding import isolate_from_the_machine


@pytest.fixture(autouse=True)
def demo_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """English messages, no PTC_* settings, and a user store of this test's own."""
    isolate_from_the_machine(monkeypatch, tmp_path)
    monkeypatch.setenv("PTC_LOCALE", "en")


def _verbose(lines: list[str]) -> View:
    """The view with every detail (the plan's reasons are what shows it learning), lines unwrapped."""
    return View(out=lines.append, width=sys.maxsize, verbose=True)


def _line(lines: list[str], start: str) -> str:
    """The one line opening with ``start`` before the demo's config change (the plan the run started with)."""
    before = (
        lines[: lines.index(message("demo.change.intro", "en"))]
        if message("demo.change.intro", "en") in lines
        else lines
    )
    (found,) = [line.strip() for line in before if line.strip().startswith(start)]
    return found


@pytest.mark.asyncio
async def test_repeated_runs_make_the_converter_full_with_a_statistics_reason(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    runs: list[list[str]] = []
    for _ in range(4):
        lines: list[str] = []
        assert await run_demo(workspace, view=_verbose(lines)) == 0
        runs.append(lines)
    first, last = runs[0], runs[-1]
    assert _line(first, "Statistics:").startswith("Statistics: no earlier run recorded in")
    assert _line(first, "host:convert_units [").startswith("host:convert_units [on-demand]: no sufficient statistics")
    assert _line(first, "host:read_file [").startswith("host:read_file [full]: in the manual baseline (rank 3)")
    assert _line(runs[2], "Statistics:").endswith(
        "too few samples yet: the baseline decides (statistics decide from 3 runs)."
    )
    assert _line(last, "Statistics:") == (
        "Statistics: runs recorded in this workspace so far: 3; convert_units was used in 3 of the 3 where it was "
        "available (window 20); enough samples: statistics decide this plan."
    )
    assert _line(last, "host:convert_units [") == (
        "host:convert_units [full]: workspace statistics: used in 3 of 3 families (100%), window 20"
    )
    # Sufficient statistics replace baseline membership: the never-used reader leaves the catalog.
    assert _line(last, "host:read_file [").startswith(
        "host:read_file [on-demand]: workspace statistics: used in 0 of 3"
    )
    # One family per run, the resume included (it revises its family's sample, it adds none).
    assert workspace_store(workspace.resolve()).read().families() == 4
    # The demo's families stay out of the user-global statistics (its tool names may be a real host's).
    assert user_store().read().status == "missing"


@pytest.mark.asyncio
async def test_a_temporary_workspace_says_it_starts_empty(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setattr("tempfile.tempdir", str(temp))
    lines: list[str] = []
    assert await run_demo(view=_verbose(lines)) == 0
    assert _line(lines, "Statistics:").startswith("Statistics: none (a temporary workspace starts empty")


@pytest.mark.asyncio
async def test_a_damaged_store_is_named_and_the_demo_still_runs(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    assert await run_demo(workspace, out=lambda line: None) == 0
    store = workspace_store(workspace.resolve()).path
    store.write_bytes(b"{truncated")
    lines: list[str] = []
    assert await run_demo(workspace, view=_verbose(lines)) == 0
    assert _line(lines, "Statistics:").startswith("Statistics: unreadable (PTC-5002: ")
    assert "statistics unreadable: a statistics store is damaged" in _line(lines, "Plan (config")
    assert store.read_bytes() == b"{truncated"
