"""``[workflow]`` caps: the spec's defaults, a workspace file only lowering them, never above the ceilings."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from hookspecs.reference import ReferenceHost
from ptc_plus.config import load_config
from ptc_plus.workflow import WorkflowCaps, default_concurrency
from ptc_plus.workflow.caps import caps_from

from .conftest import Board, report, run_script

HostFactory = Callable[..., Awaitable[ReferenceHost]]


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("version = 1\n\n[workflow]\n" + text, encoding="utf-8")


def test_the_default_concurrency_follows_the_cores() -> None:
    assert [default_concurrency(n) for n in (1, 2, 3, 4, 10, 18, 64)] == [1, 1, 1, 2, 8, 16, 16]
    caps = WorkflowCaps()
    assert (caps.max_total_agents, caps.max_items_per_call) == (1000, 4096)


def test_a_workspace_file_only_lowers_the_caps(workspace: Path, tmp_path: Path) -> None:
    _write(tmp_path / "xdg" / "ptc-plus" / "config.toml", "max_total_agents = 50\nmax_concurrent_agents = 8\n")
    _write(workspace / ".ptc-plus" / "config.toml", "max_total_agents = 900\nmax_items_per_call = 10\n")
    loaded = load_config(workspace)
    caps = caps_from(loaded.config.workflow)
    assert caps.max_total_agents == 50  # the workspace's 900 would loosen the user's 50: refused
    assert caps.max_items_per_call == 10  # lowering is fine
    assert caps.max_concurrent_agents == 8
    assert any("max_total_agents" in issue.path for issue in loaded.issues)


def test_no_file_goes_above_the_ceilings(workspace: Path, tmp_path: Path) -> None:
    _write(tmp_path / "xdg" / "ptc-plus" / "config.toml", "max_total_agents = 5000\nmax_concurrent_agents = 64\n")
    loaded = load_config(workspace)
    caps = caps_from(loaded.config.workflow)
    assert caps.max_total_agents == 1000 and caps.max_concurrent_agents == default_concurrency()
    assert {issue.path for issue in loaded.issues} >= {"workflow.max_total_agents", "workflow.max_concurrent_agents"}


@pytest.mark.asyncio
@pytest.mark.needs_bwrap
async def test_a_run_reads_the_workspace_caps(open_host: HostFactory, workspace: Path, board: Board) -> None:
    _write(workspace / ".ptc-plus" / "config.toml", "max_total_agents = 2\n")
    host = await open_host()
    session = await host.start_session()
    shown = report(await run_script(session, "for i in range(3):\n    await agent('echo ' + str(i))"))
    assert shown["stop_reason"] == "cap-tripped" and shown["agents"]["started"] == 2
    assert len(board.prompts) == 2
