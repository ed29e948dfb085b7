"""After a compaction the session re-delivers, once and within its budget, only what the model used and lost.

ADR 0070: a contract is re-delivered when it was used recently,
was expanded before, is still valid (same revision in the current plan) and
is no longer visible; never one only looked up, never one still on the
surface. The reference host's compaction keeps the latest turn's context
messages and says which (contract 1.3).
"""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest

from hookspecs import ToolDefinition
from hookspecs.reference import ScriptedModel
from hookspecs.reference.demo_tools import demo_tool_definitions
from ptc_plus.i18n import message
from ptc_plus.session.contract_memory import EXPANSION_PROVENANCE, RECOVERED_KIND, RECOVERY_PROVENANCE

from .conftest import HostFactory, state_of, write_config
from .test_expansions import CONVERT, INSPECT, USE, cell, committed, results, said

LIST = "return await tools.list_files(path='.')"


def inspect(*names: str) -> str:
    return f"found = await capabilities.inspect({list(names)!r})\nreturn [e['identity'] for e in found['expanded']]"


@pytest.mark.asyncio
async def test_still_visible_nothing_is_re_sent(open_host: HostFactory, workspace: Path, unconfined: Path) -> None:
    write_config(workspace)
    host = await open_host()
    model = ScriptedModel([cell(INSPECT), cell(USE), said("done"), said("after")])
    session = await host.start_session(title="t", model=model)
    await session.run_turn("look up and use")  # the expansion is committed in this (the latest) turn
    info = session.compact()
    assert f"{EXPANSION_PROVENANCE}:1" in (info.kept_provenances or ())
    await session.run_turn("go on")
    assert committed(session, RECOVERY_PROVENANCE) == []
    assert len(committed(session, EXPANSION_PROVENANCE)) == 1
    last = [str(m["content"]) for m in model.requests[-1].messages if m["role"] == "system"]
    assert any("async def convert_units(" in t for t in last)  # still on the surface, so not sent again
    recovered = [r for r in host.services.read_records(session.agent) if r.kind == RECOVERED_KIND]
    assert [r.payload["shown"] for r in recovered] == [None]  # the owed recovery was settled: nothing needed


@pytest.mark.asyncio
async def test_compacted_and_used_is_re_sent_once(open_host: HostFactory, workspace: Path, unconfined: Path) -> None:
    write_config(workspace)
    host = await open_host()
    model = ScriptedModel([cell(INSPECT), said("1"), cell(USE), said("2"), said("3"), said("4")])
    session = await host.start_session(title="t", model=model)
    await session.run_turn("look it up")
    await session.run_turn("use it")  # the expansion (turn 1) is not in the latest turn
    info = session.compact()
    assert f"{EXPANSION_PROVENANCE}:1" not in (info.kept_provenances or ())
    await session.run_turn("after the compaction")
    await session.run_turn("and later")
    assert results(session)[1]["status"] == "ok"
    (recovery,) = committed(session, RECOVERY_PROVENANCE)
    assert (recovery["turn"], recovery["step"]) == (3, 1)
    assert "async def convert_units(" in recovery["text"]
    assert recovery["text"].startswith(message("ptc.recovery.header", "en"))
    after = [str(m["content"]) for m in model.requests[4].messages if m["role"] == "system"]
    assert any("async def convert_units(" in t for t in after)
    assert len(committed(session, EXPANSION_PROVENANCE)) == 1


def changed_convert(workspace: Path) -> list[ToolDefinition]:
    """The demo tools, with convert_units' description revised (a new contract revision, same identity)."""
    tools = demo_tool_definitions(workspace)
    return [
        attrs.evolve(d, spec=attrs.evolve(d.spec, description=d.spec.description + " Now rounds to 10 places."))
        if d.spec.name == "convert_units"
        else d
        for d in tools
    ]


@pytest.mark.asyncio
async def test_revision_changed_is_not_re_sent_and_capabilities_says_why(
    open_host: HostFactory, workspace: Path, unconfined: Path
) -> None:
    write_config(workspace)
    host = await open_host()
    session = await host.start_session(title="t", model=ScriptedModel([cell(INSPECT), said("1"), cell(USE), said("2")]))
    await session.run_turn("look it up")
    await session.run_turn("use it")
    expanded_at = state_of(host, session).catalog.get(CONVERT)
    assert expanded_at is not None
    await host.aclose()

    again = await open_host(tools=changed_convert(workspace))
    resumed = await again.resume_session(session.agent.session_id, model=ScriptedModel([said("3")]))
    now = state_of(again, resumed).catalog.get(CONVERT)
    assert now is not None and now.revision != expanded_at.revision
    resumed.compact()
    await resumed.run_turn("after the compaction")
    assert committed(resumed, RECOVERY_PROVENANCE) == []
    why = message("ptc.recovery.changed", identity=CONVERT, old=expanded_at.revision, new=now.revision)
    assert why in resumed.command("/capabilities").text


@pytest.mark.asyncio
async def test_only_looked_up_is_not_re_sent(open_host: HostFactory, workspace: Path, unconfined: Path) -> None:
    write_config(workspace)
    host = await open_host()
    model = ScriptedModel([cell(inspect("convert_units", "list_files")), said("1"), cell(LIST), said("2"), said("3")])
    session = await host.start_session(title="t", model=model)
    await session.run_turn("look both up")
    await session.run_turn("use only list_files")
    assert results(session)[1]["status"] == "ok", results(session)[1]
    session.compact()
    await session.run_turn("after the compaction")
    (recovery,) = committed(session, RECOVERY_PROVENANCE)
    assert "async def list_files(" in recovery["text"]
    assert "convert_units" not in recovery["text"]  # looked up, never used: neither re-sent nor named


@pytest.mark.asyncio
async def test_more_qualify_than_fit_the_most_recent_go_the_rest_are_named(
    open_host: HostFactory, workspace: Path, unconfined: Path
) -> None:
    four = ("convert_units", "list_files", "read_file", "search_files")
    uses = (  # oldest first: search_files is the most recently used
        USE,
        LIST,
        "return await tools.read_file(path='docs/routes.md')",
        "return await tools.search_files(query='hill')",
    )
    budget = 300
    write_config(workspace, extra=f"\n[context]\nrecovery_tokens = {budget}\n")
    host = await open_host()
    turns = [cell(inspect(*four)), said("1"), *(cell(code) for code in uses), said("2"), said("3")]
    session = await host.start_session(title="t", model=ScriptedModel(turns))
    await session.run_turn("look up four")
    await session.run_turn("use all four")
    assert all(r["status"] == "ok" for r in results(session)), results(session)
    session.compact()
    await session.run_turn("after the compaction")
    (recovery,) = committed(session, RECOVERY_PROVENANCE)
    state = state_of(host, session)
    assert state.membership is not None and state.membership.snapshot is not None
    assert state.membership.snapshot.counter.count(recovery["text"]) <= budget
    shown = [n for n in four if f"async def {n}(" in recovery["text"]]
    assert shown and len(shown) < 4
    by_recency = ["search_files", "read_file", "list_files", "convert_units"]
    assert shown == sorted(by_recency[: len(shown)], key=four.index)  # the most recently used ones
    named = recovery["text"].rstrip("\n").rsplit("\n", 1)[-1]
    assert named.startswith("# Also used before the compaction")
    assert named.endswith(", ".join(by_recency[len(shown) :]))  # named, most recent first, never cut


@pytest.mark.asyncio
async def test_records_survive_resume(open_host: HostFactory, workspace: Path, unconfined: Path) -> None:
    write_config(workspace)
    host = await open_host()
    session = await host.start_session(title="t", model=ScriptedModel([cell(INSPECT), said("1"), cell(USE), said("2")]))
    await session.run_turn("look it up")
    await session.run_turn("use it")
    await host.aclose()

    again = await open_host()
    model = ScriptedModel([said("3"), cell(inspect("list_files")), said("4"), said("5")])
    resumed = await again.resume_session(session.agent.session_id, model=model)
    resumed.compact()
    await resumed.run_turn("after the compaction")
    (recovery,) = committed(resumed, RECOVERY_PROVENANCE)
    assert "async def convert_units(" in recovery["text"]  # what was expanded and used came back from records
    await resumed.run_turn("look up more")
    await resumed.run_turn("and later")
    expansions = [e["provenance"] for e in committed(resumed, EXPANSION_PROVENANCE)]
    assert expansions == [f"{EXPANSION_PROVENANCE}:1", f"{EXPANSION_PROVENANCE}:2"]  # numbering goes on
    assert len(committed(resumed, RECOVERY_PROVENANCE)) == 1
