"""Child agents: each plan is computed in the child's own scope and never gains what the parent's plan lacks."""

from __future__ import annotations

from pathlib import Path

import pytest

from ptc_plus.config import Disclosure
from ptc_plus.plan import Reason

from .conftest import HostFactory, entry_of, environment_of, plan_of, program_turns, state_of, write_config


@pytest.mark.usefixtures("unconfined")
@pytest.mark.asyncio
async def test_a_child_never_gains_what_the_parent_plan_lacks(open_host: HostFactory, workspace: Path) -> None:
    write_config(workspace, choices={"host:notes_search": "off"})
    host = await open_host()
    parent = await host.start_session(title="t")
    # The config changes after the parent started: it would now give the child notes_search in full.
    write_config(workspace, choices={"host:notes_search": "full"})
    child = await parent.fork(title="child")
    child.model = program_turns("return sorted(dir(tools))")
    state = state_of(host, child)
    assert state is not None and state.environment is not None and state.ptc
    entry = state.environment.plan.entry("host:notes_search")
    assert entry is not None and entry.disclosure is None and entry.reason is Reason.OUTSIDE_PARENT_SCOPE
    await child.run_turn("go")
    settled = [e.data for e in child.log.events if e.type == "tool-settled"]
    names = settled[-1]["result"]["value"]["value"]
    assert "notes_search" not in names and "read_file" in names
    catalog = [e.message["content"] for e in child.surface.entries if e.provenance == "ptc-plus:catalog"]
    assert catalog and "notes_search" not in catalog[0]
    # Its parent's plan is untouched by the fork.
    parent_env = environment_of(host, parent)
    assert parent_env.names(Disclosure.OFF) == {"notes_search"}


@pytest.mark.asyncio
async def test_a_child_plan_is_computed_in_its_own_scope(open_host: HostFactory, workspace: Path) -> None:
    write_config(workspace, baseline=["host:read_file", "host:convert_units"])
    host = await open_host()
    parent = await host.start_session(title="t")
    child = await parent.fork(title="child", tools=["run_code", "read_file"])
    plan = plan_of(host, child)
    present = {e.identity for e in plan.effective()}
    assert present == {"host:read_file"}
    assert entry_of(plan, "host:convert_units").reason is Reason.HOST_ABSENT


@pytest.mark.asyncio
async def test_a_child_of_a_native_parent_is_bounded_by_the_host_scope(
    open_host: HostFactory, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PTC_MODE", "partial")  # no user allowlist: everybody native
    host = await open_host()
    parent = await host.start_session(title="t")
    child = await parent.fork(title="child", tools=["read_file"])
    state = state_of(host, child)
    assert state is not None and state.environment is not None and not state.ptc
    assert {e.identity for e in state.environment.plan.effective()} == {"host:read_file"}
