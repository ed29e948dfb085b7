"""Discovery reports which contracts an answer delivered in full, from its thread (ADR 0070)."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Callable, Sequence

import pytest
import pytest_asyncio

from hookspecs import AgentRef
from hookspecs.reference import ReferenceHost, Session
from ptc_plus.capabilities import build_catalog
from ptc_plus.discovery import CatalogSnapshot, build_snapshot
from ptc_plus.runtime.code_runtime import CodeRuntime
from ptc_plus.runtime.discovery import ExpansionSink, Reported, answer, source_for
from ptc_plus.runtime.tool import run_code_definition

from .conftest import limits_with
from .test_discovery import TOOLS

Reports = list[tuple[AgentRef, tuple[tuple[str, str], ...], str]]


@pytest.fixture(scope="module")
def snapshot() -> CatalogSnapshot:
    return build_snapshot(build_catalog(tools=[definition.spec for definition in TOOLS]))


@pytest_asyncio.fixture
async def session_reporting(
    make_reference_host: Callable[..., ReferenceHost], snapshot: CatalogSnapshot
) -> AsyncIterator[tuple[Session, Reports]]:
    reports: Reports = []

    def sink(agent: AgentRef, contracts: Sequence[tuple[str, str]]) -> None:
        reports.append((agent, tuple(contracts), threading.current_thread().name))

    runtime = CodeRuntime(limits_with())
    definition = run_code_definition(runtime=runtime, discovery=lambda agent: snapshot, expanded=sink)
    host = make_reference_host(tools=[*TOOLS, definition])
    try:
        yield await host.start_session(user_id="u", title="t"), reports
    finally:
        await runtime.aclose()
        await host.aclose()


@pytest.mark.asyncio
async def test_only_search_and_inspect_report_and_only_what_they_expanded(
    session_reporting: tuple[Session, Reports], snapshot: CatalogSnapshot
) -> None:
    session, reports = session_reporting
    budget = snapshot.costs["host:read_file"] + 1  # one file contract fits, not both
    code = (
        f"found = await capabilities.search('file', budget={budget})\n"
        "await capabilities.find('branch')\n"
        "await capabilities.tree()\n"
        "seen = await capabilities.inspect(['delete_branch', 'nope'])\n"
        "return [found, seen]\n"
    )
    result = await session.call_tool("run_code", {"description": "t", "code": code})
    assert result.ok, result
    found, seen = result.value["value"]
    expected = [
        tuple((item["identity"], item["revision"]) for item in response["expanded"]) for response in (found, seen)
    ]
    assert [contracts for _, contracts, _ in reports] == expected
    assert len(expected[0]) == 1 and found["not_expanded"]  # a mere reference is never reported
    assert expected[1] == (("host:delete_branch", snapshot.get("host:delete_branch").revision),)  # type: ignore[union-attr]
    assert {agent for agent, _, _ in reports} == {session.agent}
    assert all(name.startswith("ptc-discovery") for _, _, name in reports)  # the discovery thread, not the loop


def test_a_failing_sink_never_costs_the_program_its_answer(
    snapshot: CatalogSnapshot, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(agent: AgentRef, contracts: Sequence[tuple[str, str]]) -> None:
        raise RuntimeError("bookkeeping bug")

    source = source_for(lambda agent: snapshot, AgentRef(session_id="s", agent_id="a", family_id="s"), broken)
    assert isinstance(source, Reported)
    with caplog.at_level("ERROR", logger="ptc_plus.runtime.discovery"):
        ok, response = answer(source, "inspect", {"names": ["read_file"]})
    assert ok and isinstance(response, dict) and response["expanded"]
    assert any("expanded failed" in r.getMessage() for r in caplog.records)


def test_without_a_sink_the_source_is_the_snapshot_itself(snapshot: CatalogSnapshot) -> None:
    sink: ExpansionSink | None = None
    assert source_for(lambda agent: snapshot, AgentRef(session_id="s", agent_id="a", family_id="s"), sink) is snapshot
