"""The plan a new session gets from the host's catalog: measured costs, shared types once, visible statistics vote."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs
import pytest

from hookspecs import ToolDefinition, ToolSpec
from hookspecs.reference import AssistantTurn, ScriptedModel
from hookspecs.reference.demo_tools import demo_tool_definitions
from ptc_plus.capabilities import delivery_text
from ptc_plus.capabilities.catalog import Catalog, build_catalog
from ptc_plus.capabilities.cost import offline_counter
from ptc_plus.config import Disclosure, load_config
from ptc_plus.plan import PlanInput, Reason, ScopeStats, StatisticsVote, compute_plan, plan_bytes
from ptc_plus.session.provision import candidates, delivery_cost, session_plan

from .conftest import EVIDENCE_BUDGET, HostFactory, entry_of, plan_of, write_config

FULL, ON_DEMAND, OFF = Disclosure.FULL, Disclosure.ON_DEMAND, Disclosure.OFF
POINT = {"type": "object", "properties": {"x": {"type": "number"}, "y": {"type": "number"}}, "required": ["x", "y"]}


def demo_catalog(workspace: Path) -> Catalog:
    return build_catalog(tools=[d.spec for d in demo_tool_definitions(workspace)])


def shared_catalog() -> Catalog:
    schema = {
        "type": "object",
        "properties": {"p": {"$ref": "#/$defs/Point"}},
        "required": ["p"],
        "$defs": {"Point": POINT},
    }
    return build_catalog(
        tools=[ToolSpec(name=n, description=f"{n} a point", input_schema=schema) for n in ("draw", "move")]
    )


def test_management_off_is_the_host_provision(workspace: Path) -> None:
    write_config(workspace, enabled=False, budget=10)  # a budget it would not fit: off ignores it
    catalog = demo_catalog(workspace)
    plan = session_plan(catalog, load_config(workspace), offline_counter())
    assert not plan.management
    assert {e.disclosure for e in plan.entries} == {FULL}
    assert {e.reason for e in plan.entries} == {Reason.MANAGEMENT_OFF}
    assert len(plan.entries) == len(catalog.managed())
    assert plan.used_tokens == delivery_cost(catalog, offline_counter())([c.identity for c in catalog.managed()])


def test_the_evidence_budget_is_below_the_whole_demo_catalog(workspace: Path) -> None:
    catalog = demo_catalog(workspace)
    whole = delivery_cost(catalog, offline_counter())([c.identity for c in catalog.managed()])
    assert whole > EVIDENCE_BUDGET  # else every test using it would plan fits-budget, not by evidence


def test_statistics_never_guess_without_a_store(workspace: Path) -> None:
    write_config(workspace, budget=EVIDENCE_BUDGET)
    plan = session_plan(demo_catalog(workspace), load_config(workspace), offline_counter())
    assert plan.statistics == "unavailable"
    # No store, no baseline: nothing is backed, so nothing fills the budget.
    assert {(e.disclosure, e.reason) for e in plan.entries} == {(ON_DEMAND, Reason.NOT_BACKED)}


def test_entries_carry_names_kinds_revisions_and_measured_costs(workspace: Path) -> None:
    catalog = demo_catalog(workspace)
    counter = offline_counter()
    write_config(workspace, budget=EVIDENCE_BUDGET, baseline=["host:read_file"])
    entry = session_plan(catalog, load_config(workspace), counter).entry("host:read_file")
    capability = catalog.get("host:read_file")
    assert entry is not None and capability is not None
    assert (entry.name, entry.kind, entry.revision) == ("read_file", "tool", capability.revision)
    assert entry.cost_tokens == counter.count(capability.contract) > 0
    assert (entry.disclosure, entry.reason, entry.baseline_rank) == (FULL, Reason.BASELINE, 0)


def test_shared_types_are_charged_once(workspace: Path) -> None:
    catalog = shared_catalog()
    counter = offline_counter()
    each = [c.cost_tokens for c in candidates(catalog, counter)]
    together = delivery_cost(catalog, counter)(["host:draw", "host:move"])
    assert together < sum(each)
    write_config(workspace, budget=together, baseline=["host:draw", "host:move"])
    plan = session_plan(catalog, load_config(workspace), counter)
    assert plan.members(FULL) == ("host:draw", "host:move")
    assert plan.used_tokens == together <= plan.budget_tokens


async def _nothing(arguments: Any, context: Any) -> Any:
    return {}


@pytest.mark.asyncio
async def test_the_budget_counts_the_delivered_text_of_a_type_shared_across_blocks(
    open_host: HostFactory, workspace: Path
) -> None:
    """An explicit ``full`` tool and a baseline one share a type: the message declares it in each block (the
    stable one first, the varying one after the navigation), and the budget counts that text (ADR 0112);
    it counted the type once (61 offline tokens for an 86-token delivery)."""
    catalog = shared_catalog()
    big = ToolSpec(name="big", description="word " * 300, input_schema={"type": "object", "properties": {}})
    tools = [ToolDefinition(spec=c.spec, handler=_nothing) for c in catalog.managed() if c.spec is not None]
    write_config(workspace, budget=150, choices={"host:draw": "full"}, baseline=["host:move"])
    host = await open_host(tools=[*tools, ToolDefinition(spec=big, handler=_nothing)])
    model = ScriptedModel([AssistantTurn(text="ok")])
    session = await host.start_session(title="t", model=model)
    await session.run_turn("hi")
    delivered = str(model.requests[0].messages[0]["content"])
    plan = plan_of(host, session)
    assert (entry_of(plan, "host:draw").reason, entry_of(plan, "host:move").reason) == (
        Reason.EXPLICIT,
        Reason.BASELINE,
    )
    draw, move = (delivery_text([catalog.get(i)]).rstrip() for i in ("host:draw", "host:move"))  # type: ignore[list-item]
    assert draw in delivered and move in delivered and delivered.count("class Point(TypedDict)") == 2
    counter = offline_counter()
    received = counter.count(draw + "\n\n" + move + "\n")
    assert plan.used_tokens == received > counter.count(delivery_text(list(catalog.managed())))


def test_baseline_fills_the_budget_in_rank_order_and_the_rest_is_on_demand(workspace: Path) -> None:
    catalog = demo_catalog(workspace)
    counter = offline_counter()
    budget = delivery_cost(catalog, counter)(["host:search_files", "host:read_file"]) - 1  # room for one, not both
    write_config(workspace, budget=budget, baseline=["host:search_files", "host:read_file"])
    plan = session_plan(catalog, load_config(workspace), counter)
    assert plan.members(FULL) == ("host:search_files",)
    assert entry_of(plan, "host:read_file").reason is Reason.BUDGET_EXHAUSTED
    assert entry_of(plan, "host:convert_units").reason is Reason.NOT_BACKED


def test_explicit_full_over_budget_is_reported_not_cut(workspace: Path) -> None:
    write_config(workspace, budget=10, choices={"host:search_files": "full"})
    plan = session_plan(demo_catalog(workspace), load_config(workspace), offline_counter())
    entry = plan.entry("host:search_files")
    assert entry is not None and entry.disclosure is FULL and entry.overage
    assert plan.overage_tokens == plan.used_tokens - 10 > 0


# -- counter-example: explicit on-demand stays on-demand, whatever statistics say --------------


def _with_full_coverage(workspace: Path, vote: StatisticsVote, statistics_enabled: bool = True) -> PlanInput:
    extra = "" if statistics_enabled else "\n[statistics]\nenabled = false\n"
    catalog = demo_catalog(workspace)
    others = [c.identity for c in catalog.managed() if c.identity != "host:notes_search"]
    write_config(
        workspace,
        # One token short of all the others: statistics fill it (the dearest is left out), fits-budget does not apply.
        budget=delivery_cost(catalog, offline_counter())(others) - 1,
        baseline=["host:notes_search"],
        choices={"host:notes_search": "on-demand"},
        extra=extra,
    )
    loaded = load_config(workspace)
    every = ScopeStats(coverage=1.0, samples=20)
    return PlanInput(
        candidates=[attrs.evolve(c, workspace=every, user=every) for c in candidates(catalog, offline_counter())],
        config=loaded.config,
        config_revision=loaded.revision,
        statistics=vote,
        delivery_cost=delivery_cost(catalog, offline_counter()),
    )


@pytest.mark.parametrize(
    ("vote", "enabled", "recorded"),
    [
        (StatisticsVote.USABLE, True, "usable"),  # 100 % coverage in both scopes
        (StatisticsVote.CORRUPT, True, "corrupt"),
        (StatisticsVote.USABLE, False, "disabled"),  # statistics switched off in the config
    ],
)
def test_explicit_on_demand_stays_on_demand(
    workspace: Path, vote: StatisticsVote, enabled: bool, recorded: str
) -> None:
    plan = compute_plan(_with_full_coverage(workspace, vote, enabled))
    assert plan.statistics == recorded
    entry = plan.entry("host:notes_search")
    assert entry is not None and (entry.disclosure, entry.reason) == (ON_DEMAND, Reason.EXPLICIT)
    # The control: with a usable vote the same statistics do put the others in full, as far as the budget goes.
    others = {(e.disclosure, e.reason) for e in plan.entries if e.identity != "host:notes_search"}
    backed = {(FULL, Reason.WORKSPACE_STATISTICS), (ON_DEMAND, Reason.BUDGET_EXHAUSTED)}
    assert others == (backed if recorded == "usable" else {(ON_DEMAND, Reason.NOT_BACKED)})


def test_identical_inputs_give_identical_plan_bytes(workspace: Path) -> None:
    write_config(
        workspace, budget=500, baseline=["host:read_file", "host:notes_add"], choices={"host:write_file": "off"}
    )
    first = session_plan(demo_catalog(workspace), load_config(workspace), offline_counter())
    second = session_plan(demo_catalog(workspace), load_config(workspace), offline_counter())
    assert plan_bytes(first) == plan_bytes(second)


def test_explicit_full_over_budget_stops_at_the_configured_context(workspace: Path) -> None:
    catalog = demo_catalog(workspace)
    choices = {"host:read_file": "full", "host:write_file": "full", "host:search_files": "full"}
    path = write_config(workspace, budget=10, choices=choices)
    unbounded = session_plan(catalog, load_config(workspace), offline_counter())
    assert set(unbounded.members(FULL)) == set(choices) and unbounded.overage_tokens > 0
    # The model's real context (stated in config: the host reports none) holds only some of them;
    # the rest are reported with their reason, never cut.
    context = unbounded.used_tokens - 1
    path.write_text(
        path.read_text("utf-8").replace("budget_tokens = 10", f"budget_tokens = 10\ncontext_tokens = {context}")
    )
    plan = session_plan(catalog, load_config(workspace), offline_counter())
    limited = {e.identity for e in plan.entries if e.reason is Reason.CONTEXT_LIMIT}
    assert limited and limited < set(choices)
    assert all(entry_of(plan, i).disclosure is ON_DEMAND for i in limited)
    assert plan.used_tokens <= context and plan.overage_tokens > 0
