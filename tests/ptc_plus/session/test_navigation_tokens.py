"""The on-demand navigation in the catalog is bounded in tokens, not only in count; its cost is reported (ADR 0054)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hookspecs import ToolDefinition, ToolSpec
from hookspecs.reference import AssistantTurn, ScriptedModel
from ptc_plus.capabilities.cost import offline_counter

from .conftest import HostFactory, write_config

SENTENCE = "Fetches inventory records for warehouse {i} including stock levels, reorder points and supplier contacts. "


async def _nothing(arguments: Any, context: Any) -> Any:
    return {}


def long_tools(count: int = 60, sentence: str = SENTENCE, name: str = "warehouse_{i:02d}") -> list[ToolDefinition]:
    """``count`` tools whose descriptions run to several hundred tokens each."""
    return [
        ToolDefinition(
            spec=ToolSpec(
                name=name.format(i=i),
                description=sentence.format(i=i) * 25,
                input_schema={"type": "object", "properties": {"sku": {"type": "string"}}},
            ),
            handler=_nothing,
        )
        for i in range(count)
    ]


def navigation_block(catalog: str) -> str:
    """The on-demand navigation part of the catalog message (it starts with its own header line)."""
    start = catalog.index("# Available on demand")
    end = catalog.find("\n\n", start)
    return catalog[start:] if end < 0 else catalog[start:end]


@pytest.mark.asyncio
async def test_sixty_long_descriptions_make_a_bounded_navigation(open_host: HostFactory, workspace: Path) -> None:
    write_config(workspace, budget=100)  # nothing fits: every tool is on demand
    host = await open_host(tools=long_tools())
    model = ScriptedModel([AssistantTurn(text="ok")])
    session = await host.start_session(title="t", model=model)
    await session.run_turn("hi")
    catalog = str(model.requests[0].messages[0]["content"])
    counter = offline_counter()
    navigation = navigation_block(catalog)

    receipt = session.command("/capabilities")
    reported = receipt.data["catalog"]["navigation"]
    assert reported["total"] == 60
    assert 0 < reported["listed"] < 60  # the long tail is named only as a count...
    assert f"{60 - reported['listed']} more" in navigation  # ...and stays searchable
    assert reported["tokens"] == counter.count(navigation) <= reported["bound"] <= 2000
    assert counter.count(catalog) <= reported["bound"] + 100  # was 28,256 tokens before the bound
    assert f"{reported['tokens']} of {reported['bound']}" in receipt.text
    assert "warehouse_00" in navigation


@pytest.mark.parametrize(
    "sentence",
    [
        "inventory records stock levels reorder points supplier contacts and shipping history for warehouse {i} ",
        "查询第 {i} 号仓库的库存记录、库存水平、再订货点、供应商联系方式和发货历史",
    ],
    ids=["no-sentence-break", "chinese"],
)
@pytest.mark.asyncio
async def test_the_token_bound_holds_where_the_count_would_not(
    open_host: HostFactory, workspace: Path, sentence: str
) -> None:
    write_config(workspace, budget=100)
    host = await open_host(tools=long_tools(sentence=sentence, name="warehouse_inventory_records_{i:02d}"))
    model = ScriptedModel([AssistantTurn(text="ok")])
    session = await host.start_session(title="t", model=model)
    await session.run_turn("hi")
    navigation = navigation_block(str(model.requests[0].messages[0]["content"]))
    reported = session.command("/capabilities").data["catalog"]["navigation"]
    assert 0 < reported["listed"] < 40  # fewer names than the count limit: the tokens ran out first
    assert reported["tokens"] == offline_counter().count(navigation) <= reported["bound"]
    assert f"{60 - reported['listed']} more" in navigation


@pytest.mark.asyncio
async def test_short_descriptions_list_every_member_up_to_the_count(open_host: HostFactory, workspace: Path) -> None:
    write_config(workspace, budget=10)
    host = await open_host()
    model = ScriptedModel([AssistantTurn(text="ok")])
    session = await host.start_session(title="t", model=model)
    await session.run_turn("hi")
    navigation = navigation_block(str(model.requests[0].messages[0]["content"]))
    reported = session.command("/capabilities").data["catalog"]["navigation"]
    assert reported["listed"] == reported["total"] == 8  # the demo tools all fit
    assert navigation.count("\n# - ") == 8 and "more" not in navigation
    assert reported["tokens"] == offline_counter().count(navigation)


@pytest.mark.asyncio
async def test_the_navigation_every_request_carries_stays_a_small_sample(
    open_host: HostFactory, workspace: Path
) -> None:
    # ADR 0107: in identity order the list is a sample of the catalog, not the tools a task needs; it is
    # part of every request's fixed cost, so it is kept to 20 short lines and 400 tokens.
    write_config(workspace, budget=100)
    host = await open_host(tools=long_tools(count=60, sentence="Fetch warehouse {i} records. ", name="wh_{i:02d}"))
    model = ScriptedModel([AssistantTurn(text="ok")])
    session = await host.start_session(title="t", model=model)
    await session.run_turn("hi")
    navigation = navigation_block(str(model.requests[0].messages[0]["content"]))
    reported = session.command("/capabilities").data["catalog"]["navigation"]
    assert reported["listed"] == navigation.count("\n# - ") == 20
    assert offline_counter().count(navigation) == reported["tokens"] <= 400 == reported["bound"]
    assert "40 more" in navigation


@pytest.mark.asyncio
async def test_members_sharing_a_summary_share_one_navigation_line(open_host: HostFactory, workspace: Path) -> None:
    # ADR 0120: BFCL's tools all open with their service's sentence ("This tool belongs to the Gorilla file
    # system."), so one line per name repeated it 20 times in every request of a session.
    write_config(workspace, budget=100)
    shared = "This tool belongs to the Gorilla file system. Tool description: operation {i} on a file."
    host = await open_host(tools=[*long_tools(count=12, sentence=shared, name="fs_{i:02d}"), *long_tools(count=3)])
    model = ScriptedModel([AssistantTurn(text="ok")])
    session = await host.start_session(title="t", model=model)
    await session.run_turn("hi")
    navigation = navigation_block(str(model.requests[0].messages[0]["content"]))
    reported = session.command("/capabilities").data["catalog"]["navigation"]
    names = ", ".join(f"fs_{i:02d}" for i in range(12))
    assert f"\n# - {names}: This tool belongs to the Gorilla file system." in navigation
    assert navigation.count("This tool belongs to the Gorilla file system.") == 1
    # Members with summaries of their own keep a line each; every member is still counted as listed.
    assert navigation.count("\n# - warehouse_") == 3
    assert reported["listed"] == reported["total"] == 15 and "more" not in navigation
    assert reported["tokens"] == offline_counter().count(navigation) <= 400
