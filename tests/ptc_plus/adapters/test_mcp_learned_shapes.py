"""Learned output shapes with real MCP servers (ADR 0102): a warm-up session teaches the shape of a tool that
publishes no output schema, and the next session's contract shows it as a learned ``TypedDict``.

``mcp-server-time`` publishes output schemas for both its tools (structured content), so nothing is learned
there; ``mcp-server-git`` publishes none and answers plain text (learned: ``str``); the fixture server's
``rates`` publishes none and answers JSON text (learned: a ``TypedDict`` of the parsed text).
"""

# ruff: noqa: F811 - the fixtures are imported from mcp_support (this directory has no conftest of its own)

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from hookspecs.reference import ReferenceHost
from ptc_plus.sdk import LEARNED_MARK
from ptc_plus.statistics import workspace_store
from tests.ptc_plus.session.conftest import HostFactory, program_turns, state_of, write_config

from .mcp_support import (  # noqa: F401 - fixtures
    BIN,
    configure,
    fixture_table,
    isolated_env,
    mark,
    open_host,
    server_table,
    settled_values,
    workspace,
)

WARM_UP = """
import asyncio
fr, de, status, now = await asyncio.gather(tools.rates(country="FR"), tools.rates(country="DE"),
                                           tools.git_status(repo_path={repo!r}), tools.get_current_time(timezone="UTC"))
return [fr, de, status, now]
"""

WRITTEN_AGAINST_THE_SHAPE = """
import json
rates = json.loads(await tools.rates(country="FR"))
return {"rate": rates["standard_rate"], "first_reduced": rates["reduced"][0]}
"""


def repository(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    return repo


async def session_on(host: ReferenceHost, code: str) -> object:
    session = await host.start_session(title="t", model=program_turns(code))
    await session.run_turn("go")
    return session


@pytest.mark.asyncio
async def test_a_warm_up_session_teaches_the_next_sessions_contract_a_learned_typeddict(
    open_host: HostFactory, workspace: Path, tmp_path: Path, mark: str
) -> None:
    repo = repository(tmp_path)
    configure(
        tmp_path,
        fixture_table(mark),
        server_table("git", str(BIN / "mcp-server-git"), ["--repository", str(repo)]),
        server_table("time", str(BIN / "mcp-server-time"), []),
    )
    write_config(workspace, budget=100_000)
    host = await open_host()
    first = await session_on(host, WARM_UP.format(repo=str(repo)))
    before = state_of(host, first).catalog.get("mcp:fixture/rates")  # type: ignore[arg-type]
    assert before is not None and "-> Any" in before.contract and LEARNED_MARK not in before.contract
    assert len(settled_values(first)) == 4  # type: ignore[arg-type]

    view = workspace_store(workspace).read()
    rates = view.learned("mcp:fixture/rates", before.revision)
    assert rates is not None and rates.results == 2
    assert rates.shape["contentSchema"]["required"] == ["country", "reduced", "standard_rate"]
    git = state_of(host, first).catalog.get("mcp:git/git_status")  # type: ignore[arg-type]
    assert git is not None and view.learned("mcp:git/git_status", git.revision).shape == {"type": "string"}  # type: ignore[union-attr]
    time_tool = state_of(host, first).catalog.get("mcp:time/get_current_time")  # type: ignore[arg-type]
    assert time_tool is not None and view.learned("mcp:time/get_current_time", time_tool.revision) is None

    second = await session_on(host, WRITTEN_AGAINST_THE_SHAPE)
    after = state_of(host, second).catalog.get("mcp:fixture/rates")  # type: ignore[arg-type]
    assert after is not None and after.revision == before.revision  # the host's contract did not change
    assert f"{LEARNED_MARK} (2 results since {rates.since}" in after.contract
    assert "async def rates(*, country: str) -> str:" in after.contract
    assert "json.loads(result) is RatesResult" in after.contract
    assert "class RatesResult(TypedDict" in after.contract and "standard_rate: float" in after.contract
    assert after.tool is not None and after.tool.learned is not None
    assert settled_values(second) == {"rate": 20.0, "first_reduced": 5.5}  # type: ignore[arg-type]
    # The second session's result widened nothing (same shape) and counted once more.
    assert workspace_store(workspace).read().learned("mcp:fixture/rates", before.revision).results == 3  # type: ignore[union-attr]


@pytest.mark.asyncio
async def test_learn_output_shapes_false_learns_and_shows_nothing(
    open_host: HostFactory, workspace: Path, tmp_path: Path, mark: str
) -> None:
    configure(tmp_path, fixture_table(mark))
    write_config(workspace, budget=100_000, extra="\n[statistics]\nlearn_output_shapes = false\n")
    host = await open_host()
    first = await session_on(host, 'return await tools.rates(country="FR")')
    assert workspace_store(workspace).read().all_learned() == ()
    assert workspace_store(workspace).read().families() == 1  # usage is still recorded
    second = await session_on(host, 'return await tools.rates(country="DE")')
    found = state_of(host, second).catalog.get("mcp:fixture/rates")  # type: ignore[arg-type]
    assert found is not None and LEARNED_MARK not in found.contract
    assert first is not None
