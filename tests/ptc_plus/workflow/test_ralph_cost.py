"""Ralph's cost cap (ADR 0125): the user file's price sheet prices each child's reported usage (contract 1.6).

The rounds' children are the fixtures' :class:`ChildModel` on route ``scripted-child``; each of its requests
reports 60 input and 40 output tokens (no cached part). ``forever polish`` rounds take one request each.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

import ptc_plus.plugin
from hookspecs.children import ChildRequest, ChildResult
from hookspecs.reference import ReferenceHost, Session
from ptc_plus.workflow.errors import RalphPriceInvalid
from ptc_plus.workflow.prices import PriceSheet

from .conftest import Board

HostFactory = Callable[..., Awaitable[ReferenceHost]]
INPUT, OUTPUT = 60, 40
"""What :class:`ChildModel` reports per request (the fixture's numbers, not this file's)."""


def _files(tmp_path: Path, workspace: Path, user: str, local: str = "") -> None:
    path = tmp_path / "xdg" / "ptc-plus" / "config.toml"
    path.parent.mkdir(parents=True)
    path.write_text(f"version = 1\n\n[workflow]\n{user}\n", encoding="utf-8")
    if local:
        mine = workspace / ".ptc-plus" / "config.toml"
        mine.parent.mkdir(parents=True)
        mine.write_text(f"version = 1\n\n[workflow]\n{local}\n", encoding="utf-8")


async def _ralph(host: ReferenceHost, session: Session, line: str) -> dict[str, Any]:
    receipt = session.command(line)
    assert receipt.status.value == "shown", receipt.text
    desk = ptc_plus.plugin.desk(host.services)
    assert desk is not None
    _run, task = desk.ralphs[session.agent.session_id][-1]
    return (await asyncio.shield(task)).to_json()


def test_the_sheet_prices_cached_input_at_its_own_rate_and_unknowns_as_unknown() -> None:
    sheet = PriceSheet.parse({"openai:m": "uncached=2 cached=0.5 output=8"})
    result = ChildResult(
        ok=True, session_id="s", route="openai:m", input_tokens=1000, cached_input_tokens=400, output_tokens=100
    )
    assert sheet.cost(result) == pytest.approx((600 * 2 + 400 * 0.5 + 100 * 8) / 1_000_000)
    assert PriceSheet.parse({"openai:m": "uncached=2 output=8"}).cost(result) == pytest.approx(
        (1000 * 2 + 100 * 8) / 1_000_000
    )  # cached left out: priced as uncached, never below the truth
    assert sheet.cost(ChildResult(ok=True, session_id="s", route="other", input_tokens=1, output_tokens=1)) is None
    assert sheet.cost(ChildResult(ok=True, session_id="s", route="openai:m", output_tokens=1)) is None


@pytest.mark.parametrize("entry", ["uncached=1", "uncached=x output=1", "uncached=-1 output=1", "fast output=1", ""])
def test_a_bad_price_entry_is_refused(entry: str) -> None:
    with pytest.raises(RalphPriceInvalid) as refused:
        PriceSheet.parse({"openai:m": entry})
    assert refused.value.code == "PTC-8035"


@pytest.mark.asyncio
async def test_the_reference_host_reports_a_childs_route_and_counts(open_host: HostFactory) -> None:
    host = await open_host()
    parent = await host.start_session()
    assert host.children is not None
    result = await host.children.run(ChildRequest(parent=parent.agent, prompt="echo hi"))
    assert result.ok and result.route == "scripted-child"
    assert (result.input_tokens, result.cached_input_tokens, result.output_tokens) == (INPUT, None, OUTPUT)
    assert result.tokens == INPUT + OUTPUT


@pytest.mark.asyncio
@pytest.mark.needs_bwrap
async def test_the_cost_cap_ends_budget_limited_and_a_workspace_can_neither_lift_it_nor_reprice(
    open_host: HostFactory, tmp_path: Path, workspace: Path, board: Board
) -> None:
    per_round = (INPUT * 3 + OUTPUT * 5) / 1_000_000
    cap = per_round * 1.5  # reached in the second round
    _files(
        tmp_path,
        workspace,
        f'ralph_max_cost = {cap!r}\nprices = {{ "scripted-child" = "uncached=3 output=5" }}',
        'ralph_max_cost = 0.0\nprices = { "scripted-child" = "uncached=0 output=0" }',
    )
    host = await open_host()
    session = await host.start_session()
    outcome = await _ralph(host, session, "/ralph forever polish --max-rounds 5")
    assert outcome["state"] == "budget-limited" and outcome["rounds"] == 2
    assert outcome["cost"] == pytest.approx(2 * per_round)
    assert "cap" in outcome["detail"] and board.ralph_rounds == [1, 2]
    assert "it is not done" in session.command("/ralph").text


@pytest.mark.asyncio
@pytest.mark.needs_bwrap
async def test_a_round_that_cannot_be_priced_ends_budget_limited(
    open_host: HostFactory, tmp_path: Path, workspace: Path, board: Board
) -> None:
    _files(tmp_path, workspace, 'ralph_max_cost = 5.0\nprices = { "openai:other" = "uncached=1 output=1" }')
    host = await open_host()
    session = await host.start_session()
    outcome = await _ralph(host, session, "/ralph forever polish --max-rounds 5")
    assert outcome["state"] == "budget-limited" and outcome["rounds"] == 1
    assert "scripted-child" in outcome["detail"] and "cannot be known" in outcome["detail"]


@pytest.mark.asyncio
async def test_a_cost_cap_without_prices_is_refused_before_anything_runs(
    open_host: HostFactory, tmp_path: Path, workspace: Path, board: Board
) -> None:
    # The workspace's prices do not count: the user file has none.
    _files(tmp_path, workspace, "ralph_max_cost = 1.0", 'prices = { "scripted-child" = "uncached=1 output=1" }')
    host = await open_host()
    session = await host.start_session()
    receipt = session.command("/ralph forever polish")
    assert receipt.status.value == "failed" and receipt.data["code"] == "PTC-8034"
    assert "ralph_max_cost" in receipt.text and board.ralph_rounds == []
    _bad = session.command("/ralph")
    assert _bad.text == "No Ralph run in this session."
