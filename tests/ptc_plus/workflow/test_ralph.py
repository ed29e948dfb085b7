"""Ralph (ADR 0117): fresh children round after round, one validated report handed on, four terminal states."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

import ptc_plus.plugin
from hookspecs.reference import ReferenceHost, Session
from ptc_plus.workflow.ralph import HANDOFF_CHARS, report_problem

from .conftest import RALPH_PROMPT, Board

HostFactory = Callable[..., Awaitable[ReferenceHost]]


async def _ralph(host: ReferenceHost, session: Session, line: str) -> dict[str, Any]:
    receipt = session.command(line)
    assert receipt.status.value == "shown", receipt.text
    desk = ptc_plus.plugin.desk(host.services)
    assert desk is not None
    _run, task = desk.ralphs[session.agent.session_id][-1]
    return (await asyncio.shield(task)).to_json()


@pytest.mark.asyncio
@pytest.mark.needs_bwrap
async def test_three_fresh_rounds_edit_the_workspace_and_complete(
    open_host: HostFactory, board: Board, workspace: Path
) -> None:
    host = await open_host()
    session = await host.start_session()
    outcome = await _ralph(host, session, "/ralph write three parts of the report")
    assert outcome["state"] == "complete" and outcome["rounds"] == 3
    assert [(workspace / f"part{n}.txt").read_text() for n in (1, 2, 3)] == ["part 1", "part 2", "part 3"]
    # Fresh context: each round saw only its own prompt; the second and third the previous report alone.
    ralph_requests = [r for r in board.first_requests if any(RALPH_PROMPT in str(m["content"]) for m in r.messages)]
    assert len(ralph_requests) == 3
    for request in ralph_requests:
        assert [m["role"] for m in request.messages if m["role"] != "system"] == ["user"]
    assert "none: this is the first round" in str(ralph_requests[0].messages)
    assert '"summary":"wrote part 2"' in str(ralph_requests[2].messages)
    assert "wrote part 1" not in str(ralph_requests[2].messages)  # only the previous report travels
    shown = session.command("/ralph").text
    assert "complete after 3 rounds" in shown and "a claim to check, not proof" in shown and "part3.txt" in shown


@pytest.mark.asyncio
@pytest.mark.needs_bwrap
async def test_a_concrete_blocker_ends_blocked(open_host: HostFactory) -> None:
    host = await open_host()
    session = await host.start_session()
    outcome = await _ralph(host, session, "/ralph blocked: deploy the site")
    assert outcome["state"] == "blocked" and outcome["rounds"] == 1
    assert "deploy.key" in session.command("/ralph").text


@pytest.mark.asyncio
@pytest.mark.needs_bwrap
async def test_rounds_running_out_is_budget_limited_never_done(open_host: HostFactory, board: Board) -> None:
    host = await open_host()
    session = await host.start_session()
    outcome = await _ralph(host, session, "/ralph forever polish --max-rounds 2")
    assert outcome["state"] == "budget-limited" and outcome["rounds"] == 2
    assert board.ralph_rounds == [1, 2]
    assert "it is not done" in session.command("/ralph").text


@pytest.mark.asyncio
@pytest.mark.needs_bwrap
async def test_a_report_breaking_the_rules_fails_the_round(open_host: HostFactory) -> None:
    host = await open_host()
    session = await host.start_session()
    outcome = await _ralph(host, session, "/ralph vague goal")
    assert outcome["state"] == "round-failed" and "concrete blocker" in outcome["detail"]


@pytest.mark.asyncio
@pytest.mark.needs_bwrap
async def test_bad_ralph_arguments_are_refused_with_codes(open_host: HostFactory) -> None:
    host = await open_host()
    session = await host.start_session()
    assert session.command("/ralph --max-rounds 3").data["code"] == "PTC-8031"
    assert session.command("/ralph goal --max-rounds 0").data["code"] == "PTC-8032"
    assert session.command("/ralph goal --max-rounds 257").data["code"] == "PTC-8032"
    assert session.command("/ralph").text == "No Ralph run in this session."


@pytest.mark.parametrize(
    ("report", "problem"),
    [
        ({"status": "continue", "summary": "s", "evidence": [], "next_steps": [], "blocker": ""}, "continue needs"),
        ({"status": "continue", "summary": "s", "evidence": [], "next_steps": ["a"], "blocker": "x"}, "continue"),
        ({"status": "complete", "summary": "s", "evidence": [], "next_steps": [], "blocker": ""}, "complete needs"),
        ({"status": "complete", "summary": "s", "evidence": ["e"], "next_steps": ["a"], "blocker": ""}, "complete"),
        ({"status": "blocked", "summary": "s", "evidence": [], "next_steps": [], "blocker": "  "}, "concrete"),
        ({"status": "done", "summary": "s", "evidence": [], "next_steps": [], "blocker": ""}, "schema"),
        ({"status": "continue", "summary": "s", "evidence": [], "next_steps": ["a"]}, "schema"),
        (
            {"status": "continue", "summary": "s" * HANDOFF_CHARS, "evidence": [], "next_steps": ["a"], "blocker": ""},
            "at most",
        ),
    ],
)
def test_report_rules(report: dict[str, Any], problem: str) -> None:
    assert problem in report_problem(report)


def test_a_valid_report_passes() -> None:
    report = {"status": "complete", "summary": "s", "evidence": ["e"], "next_steps": [], "blocker": ""}
    assert report_problem(report) == ""


@pytest.mark.asyncio
@pytest.mark.needs_bwrap
async def test_the_user_files_token_cap_limits_ralph(open_host: HostFactory, tmp_path: Path, workspace: Path) -> None:
    user = tmp_path / "xdg" / "ptc-plus" / "config.toml"
    user.parent.mkdir(parents=True)
    user.write_text("version = 1\n\n[workflow]\nralph_max_tokens = 150\n", encoding="utf-8")
    # A workspace file cannot lift it (0 would be no cap at all).
    local = workspace / ".ptc-plus" / "config.toml"
    local.parent.mkdir(parents=True)
    local.write_text("version = 1\n\n[workflow]\nralph_max_tokens = 0\n", encoding="utf-8")
    host = await open_host()
    session = await host.start_session()
    outcome = await _ralph(host, session, "/ralph forever polish")
    # Each round's child reports 100 tokens: the second round reaches the cap of 150.
    assert outcome["state"] == "budget-limited" and outcome["rounds"] == 2 and outcome["tokens"] == 200
    assert "150" in outcome["detail"]
