"""Projections of the one plan: stable prefix, catalog message order, and nothing at all when the gate is off."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import attrs
import pytest

from hookspecs import TokenCounter
from hookspecs.reference import AssistantTurn, ScriptedModel
from ptc_plus.capabilities.catalog import Catalog
from ptc_plus.config import LoadedConfig
from ptc_plus.plan import CapabilityPlan, PlanInput, ScopeStats, StatisticsVote, compute_plan, plan_bytes
from ptc_plus.session import refresh as refresh_module
from ptc_plus.session.provision import candidates, delivery_cost

from .conftest import HostFactory, state_of, write_config


def pretend_statistics(coverage: Callable[[str], float]) -> Callable[..., CapabilityPlan]:
    """A ``session_plan`` stand-in whose workspace statistics give ``coverage(identity)`` over 20 families."""

    def plan(
        catalog: Catalog,
        loaded: LoadedConfig,
        counter: TokenCounter,
        *,
        parent_members: frozenset[str] | None = None,
        **_: object,
    ) -> CapabilityPlan:
        cands = [
            attrs.evolve(c, workspace=ScopeStats(coverage=coverage(c.identity), samples=20))
            for c in candidates(catalog, counter)
        ]
        return compute_plan(
            PlanInput(
                candidates=cands,
                config=loaded.config,
                config_revision=loaded.revision,
                statistics=StatisticsVote.USABLE,
                parent_members=parent_members,
                delivery_cost=delivery_cost(catalog, counter),
            )
        )

    return plan


@pytest.mark.asyncio
async def test_stable_prefix_bytes_do_not_move_while_statistics_grow(
    open_host: HostFactory, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_config(workspace, budget=600, choices={"host:convert_units": "full"})
    host = await open_host()
    counters = [
        lambda identity: 0.0,
        lambda identity: 0.5 if "notes" in identity else 0.0,
        lambda identity: 1.0,
    ]
    prefixes, plans, catalogs = [], [], []
    for coverage in counters:
        monkeypatch.setattr(refresh_module, "session_plan", pretend_statistics(coverage))
        model = ScriptedModel([AssistantTurn(text="ok")])
        session = await host.start_session(title="t", model=model)
        await session.run_turn("hi")
        request = model.requests[0]
        prefixes.append((request.system, tuple(request.tools)))
        state = state_of(host, session)
        assert state is not None and state.environment is not None
        plans.append(plan_bytes(state.environment.plan))
        catalogs.append(request.messages[0]["content"])
    assert len(set(plans)) == 3  # the plans really differ...
    assert len(set(catalogs)) == 3
    assert all(p == prefixes[0] for p in prefixes)  # ...the system prompt and native tools do not, byte for byte
    system, tools = prefixes[0]
    assert [t.name for t in tools] == ["run_code", "read_spill"]
    assert "convert_units" not in system and "notes" not in system
    # Explicit full text comes first in the catalog message, whatever statistics did.
    head = catalogs[0].split("\n\n\n")[0]
    assert all(c.startswith(head) for c in catalogs)
    assert all(c.index("async def convert_units(") < c.find("async def notes_") for c in catalogs[1:])


@pytest.mark.asyncio
async def test_gate_off_leaves_the_native_provision_unchanged(
    open_host: HostFactory, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_config(workspace, budget=10, choices={"host:notes_search": "off"})
    plain = await open_host(plugins=[])
    plain_model = ScriptedModel([AssistantTurn(text="ok")])
    native = await plain.start_session(title="t", model=plain_model)
    await native.run_turn("hi")
    expected = plain_model.requests[0]

    monkeypatch.setenv("PTC_MODE", "off")
    host = await open_host()
    model = ScriptedModel([AssistantTurn(text="ok")])
    session = await host.start_session(title="t", model=model)
    await session.run_turn("hi")
    sent = model.requests[0]
    assert sent.system == expected.system  # no PTC sections
    assert sent.tools == expected.tools  # no run_code; every tool native, off ones included
    assert sent.messages == expected.messages  # no catalog message
    receipt = session.command("/capabilities")
    assert "native" in receipt.text and "gate" in receipt.text


@pytest.mark.asyncio
async def test_on_demand_navigation_is_bounded(
    open_host: HostFactory, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ptc_plus.session import projection

    monkeypatch.setattr(projection, "NAVIGATION_LIMIT", 2)
    write_config(workspace, budget=100)
    host = await open_host()
    model = ScriptedModel([AssistantTurn(text="ok")])
    session = await host.start_session(title="t", model=model)
    await session.run_turn("hi")
    text = model.requests[0].messages[0]["content"]
    assert text.count("\n# - ") == 2
    assert "… and 6 more" in text
