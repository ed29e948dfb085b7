"""Contract 1.2 (ADR 0065): its version, the family-settled fact, and that 1.1 plugins keep working."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from pathlib import Path

import attrs
import pytest

import hookspecs
from hookspecs import (
    CONTRACT_VERSION,
    AgentRef,
    FamilyMember,
    FamilySettlement,
    PromptContext,
    PromptSection,
    hookimpl,
    specs,
)
from hookspecs.reference import AssistantTurn, ReferenceHost, ScriptedModel


def test_the_contract_version_is_at_least_1_2() -> None:
    assert tuple(int(p) for p in CONTRACT_VERSION.split(".")) >= (1, 2)
    assert CONTRACT_VERSION == specs.CONTRACT_VERSION
    assert {"FamilySettlement", "FamilyMember"} <= set(hookspecs.__all__)


def test_the_family_settled_hook_takes_the_family_and_the_services() -> None:
    function = specs.agent_host_family_settled
    assert list(inspect.signature(function).parameters) == ["family", "services"]
    doc = inspect.getdoc(function) or ""
    # What a plugin must assume of a 1.1 host is part of the contract, not folklore.
    assert "contract 1.1 never calls it" in " ".join(doc.split())


def test_a_settlement_is_a_frozen_value_with_derived_agents() -> None:
    root = AgentRef(session_id="r", agent_id="r", family_id="r")
    child = AgentRef(session_id="c", agent_id="c", family_id="r", parent_session_id="r")
    family = FamilySettlement(
        family_id="r",
        root=root,
        members=(
            FamilyMember(agent=root, workspace=Path("/w"), started=False),
            FamilyMember(agent=child, workspace=Path("/elsewhere"), started=True),
        ),
        generation=1,
    )
    assert family.agents == (root, child) and family.started
    assert not attrs.evolve(family, members=family.members[:1]).started
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        family.generation = 2  # type: ignore[misc]
    with pytest.raises(TypeError):
        FamilySettlement("r", root, (), 1)  # type: ignore[call-arg]  # keyword-only


@pytest.mark.asyncio
async def test_a_1_1_plugin_without_the_hook_still_works(make_reference_host: Callable[..., ReferenceHost]) -> None:
    class Old:
        @hookimpl
        def agent_host_prompt_sections(self, context: PromptContext) -> Sequence[PromptSection]:
            return [PromptSection(name="old", text="OLD")]

    async with make_reference_host(plugins=[Old()]) as host:
        session = await host.start_session(model=ScriptedModel([AssistantTurn(text="done")]))
        assert (await session.run_turn("hi")).final_text == "done"
        assert session.system_prompt().endswith("OLD") and host.facade.reports == []
