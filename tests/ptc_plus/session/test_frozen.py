"""Frozen per session: resume restores the recorded plan and never recomputes; bad records are diagnosed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs
import pytest

from hookspecs import SessionRecord
from hookspecs.reference import AssistantTurn, ScriptedModel
from hookspecs.reference.demo_tools import demo_tool_definitions
from ptc_plus.config import Disclosure
from ptc_plus.plan import Reason
from ptc_plus.session import refresh as refresh_module
from ptc_plus.session.environment import KIND

from .conftest import EVIDENCE_BUDGET, HostFactory, entry_of, environment_of, state_of, write_config

FIRST = {"host:notes_search": "full", "host:write_file": "off"}
CHANGED = {"host:notes_search": "off", "host:write_file": "full", "host:read_file": "on-demand"}


def env_bytes(host: Any, session: Any) -> bytes:
    state = state_of(host, session)
    assert state is not None and state.environment is not None
    return state.environment.to_bytes()


def answer(text: str = "ok") -> ScriptedModel:
    return ScriptedModel([AssistantTurn(text=text)])


@pytest.mark.asyncio
async def test_resume_keeps_the_plan_after_config_and_statistics_change(
    open_host: HostFactory, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_config(workspace, budget=5000, baseline=["host:read_file"], choices=FIRST)
    host = await open_host()
    session = await host.start_session(title="t")
    original = env_bytes(host, session)
    await host.aclose()

    write_config(workspace, budget=7, baseline=["host:convert_units"], choices=CHANGED)

    def recompute(*args: object, **kwargs: object) -> None:
        raise AssertionError("resume recomputed the plan")

    # Pretend statistics now exist and would vote: any recomputation would fail the test.
    monkeypatch.setattr(refresh_module, "session_plan", recompute)
    resumed_host = await open_host()
    resumed = await resumed_host.resume_session(session.agent.session_id)
    assert env_bytes(resumed_host, resumed) == original
    environment = environment_of(resumed_host, resumed)
    assert entry_of(environment.plan, "host:notes_search").disclosure is Disclosure.FULL
    assert environment.names(Disclosure.OFF) == {"write_file"}

    # The control: a new session does follow the new config.
    monkeypatch.undo()
    fresh = await resumed_host.start_session(title="t")
    fresh_env = environment_of(resumed_host, fresh)
    assert entry_of(fresh_env.plan, "host:notes_search").disclosure is Disclosure.OFF
    assert env_bytes(resumed_host, fresh) != original


@pytest.mark.asyncio
async def test_a_pre_plugin_session_keeps_the_host_provision(open_host: HostFactory, workspace: Path) -> None:
    write_config(workspace, budget=10, choices={"host:notes_search": "off"})
    plain = await open_host(plugins=[])
    old = await plain.start_session(title="t")
    native_tools = [s.name for s in old.model_tools()]
    native_prompt = old.system_prompt()
    await plain.aclose()

    host = await open_host()
    session = await host.resume_session(old.agent.session_id, model=answer())
    state = state_of(host, session)
    assert state is not None and state.environment is None
    assert [s.name for s in session.model_tools()] == native_tools  # native, run_code absent
    assert "run_code" not in host.view(session.agent).names()
    assert session.system_prompt() == native_prompt  # nothing injected
    await session.run_turn("hello")
    assert not [e for e in session.surface.entries if e.provenance is not None]  # no catalog message
    receipt = session.command("/capabilities")
    assert "no capability environment record" in receipt.text and "predates" in receipt.text


@pytest.mark.asyncio
async def test_a_corrupt_record_is_diagnosed_and_never_blocks_new_sessions(
    open_host: HostFactory, workspace: Path
) -> None:
    write_config(workspace, choices={"host:notes_search": "off"})
    host = await open_host()
    session = await host.start_session(title="t")
    host.services.append_record(session.agent, SessionRecord(kind=KIND, payload={"version": 1, "plan": [1, 2]}))
    await host.aclose()

    again = await open_host()
    resumed = await again.resume_session(session.agent.session_id, model=answer("still usable"))
    state = state_of(again, resumed)
    assert state is not None and state.environment is None
    assert any("corrupt" in d for d in state.diagnostics)
    summary = await resumed.run_turn("hello")  # the session stays usable (native)
    assert summary.final_text == "still usable"
    assert "corrupt" in resumed.command("/capabilities").text

    fresh = await again.start_session(title="t")  # a valid future session is unaffected
    fresh_state = state_of(again, fresh)
    assert fresh_state is not None and fresh_state.environment is not None and fresh_state.ptc
    assert fresh_state.environment.names(Disclosure.OFF) == {"notes_search"}


@pytest.mark.asyncio
async def test_an_unknown_format_is_diagnosed_apart_from_corruption(open_host: HostFactory, workspace: Path) -> None:
    host = await open_host()
    session = await host.start_session(title="t")
    host.services.append_record(
        session.agent, SessionRecord(kind="ptc-capability-environment/v2", payload={"version": 2}, version=2)
    )
    await host.aclose()
    again = await open_host()
    resumed = await again.resume_session(session.agent.session_id)
    diagnostics = state_of(again, resumed).diagnostics
    assert any("cannot read" in d for d in diagnostics)
    assert not any("corrupt" in d for d in diagnostics)


@pytest.mark.asyncio
async def test_a_vanished_capability_follows_the_host_without_re_ranking(
    open_host: HostFactory, workspace: Path
) -> None:
    write_config(workspace, budget=EVIDENCE_BUDGET, baseline=["host:notes_search", "host:read_file"])
    host = await open_host()
    session = await host.start_session(title="t")
    original = env_bytes(host, session)
    await host.aclose()

    fewer = [d for d in demo_tool_definitions(workspace) if d.spec.name != "notes_search"]
    again = await open_host(tools=fewer)
    resumed = await again.resume_session(session.agent.session_id)
    state = state_of(again, resumed)
    assert state is not None and state.environment is not None
    assert state.environment.to_bytes() == original  # nothing re-ranked, the record is unchanged
    assert [d for d in state.diagnostics if "host:notes_search" in d]
    assert len(state.diagnostics) == 1
    assert "notes_search" not in again.view(resumed.agent).names()  # the host fact wins
    entry = state.environment.plan.entry("host:read_file")
    assert entry is not None and entry.reason is Reason.BASELINE and entry.disclosure is Disclosure.FULL


@pytest.mark.asyncio
async def test_a_changed_contract_follows_the_host_with_a_diagnostic(open_host: HostFactory, workspace: Path) -> None:
    write_config(workspace, budget=100_000, baseline=["host:notes_search"])
    host = await open_host()
    session = await host.start_session(title="t")
    original = env_bytes(host, session)
    await host.aclose()

    changed = [
        attrs.evolve(d, spec=attrs.evolve(d.spec, description="Search notes, now faster."))
        if d.spec.name == "notes_search"
        else d
        for d in demo_tool_definitions(workspace)
    ]
    again = await open_host(tools=changed)
    resumed = await again.resume_session(session.agent.session_id)
    state = state_of(again, resumed)
    assert state is not None and state.environment is not None
    assert state.environment.to_bytes() == original
    assert len(state.diagnostics) == 1 and "contract changed" in state.diagnostics[0]
    assert "contract changed" in resumed.command("/capabilities").text
