"""Runs of tiny tasks in every style, for real: host tools, real programs in bubblewrap, a real MCP server."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hookspecs.reference.model import AssistantTurn, ModelRequest
from hookspecs.reference.openai_client import RequestUsage
from ptc_plus.evaluation.driver import contract_shown
from ptc_plus.evaluation.errors import CatalogTooSmall, StatisticsRequired
from ptc_plus.evaluation.exchange import ProviderUsage, RunResult
from ptc_plus.evaluation.mcp_bridge import McpBridge
from ptc_plus.evaluation.runner import Parameters, run_task, warm_up
from ptc_plus.evaluation.task import EndState, Style, Task, Verdict
from ptc_plus.evaluation.task_plan import Ref, Step, TaskPlan, Turn
from tests.ptc_plus.evaluation.tiny_suite import CHILD, LONG_TAIL, MCP, NEEDS, ONE_CALL, OWN_TOOLS, SUITE, filler

CATALOG = 20
SMALL = Parameters(budget_tokens=40)
"""Tokens: less than any two contracts of the tiny suite, so a cold plan shows almost nothing in full."""
LEARNED = Parameters(budget_tokens=160)
"""Tokens: room for one contract with the result shape the warm-up taught (ADR 0102 makes it larger)."""

RUN_STYLES = (Style.NATIVE, Style.TOOL_SEARCH, Style.PTC, Style.PTC_PLUS_COLD)


def names(request: ModelRequest) -> list[str]:
    return [t.name for t in request.tools]


def first_code(result: RunResult) -> str:
    return str(result.exchanges[0].answer.tool_calls[0].arguments["code"])


def assert_passed(result: RunResult) -> None:
    assert result.error == ""
    assert result.verdict == Verdict(passed=True), result.verdict.reason


@pytest.mark.asyncio
@pytest.mark.needs_bwrap
@pytest.mark.parametrize("style", [Style.NATIVE, Style.PTC_PLUS_COLD], ids=lambda s: s.value)
async def test_the_exchanges_are_the_same_whatever_the_run_directorys_path(tmp_path: Path, style: Style) -> None:
    # The host's prompt names the workspace; a longer TMPDIR (or another uid) must not change what is counted.
    short = await run_task(SUITE, ONE_CALL, style, CATALOG, workdir=tmp_path / "a", parameters=SMALL)
    long = await run_task(
        SUITE, ONE_CALL, style, CATALOG, workdir=tmp_path / "a-much-longer-directory" / "b", parameters=SMALL
    )
    assert_passed(short)
    assert [e.request for e in short.exchanges] == [e.request for e in long.exchanges]
    assert "/eval/run/workspace" in short.exchanges[0].request.system
    assert str(tmp_path) not in repr([e.request for e in short.exchanges])


@pytest.mark.asyncio
@pytest.mark.needs_bwrap
@pytest.mark.parametrize("style", RUN_STYLES, ids=lambda s: s.value)
async def test_one_call_task_passes_in_every_style(tmp_path: Path, style: Style) -> None:
    result = await run_task(SUITE, ONE_CALL, style, CATALOG, workdir=tmp_path, parameters=SMALL)
    assert_passed(result)
    assert result.final_text == "5.5"
    first = result.exchanges[0].request
    catalog = {"lookup_order", "add_note", "weather_forecast", "get_current_time", "convert_time", "agent"}
    catalog |= {s.name for s in filler(CATALOG - OWN_TOOLS)}
    if style is Style.NATIVE:
        assert all(set(names(e.request)) == catalog for e in result.exchanges)
        assert len(names(first)) == CATALOG
        assert "run_code" not in first.system
    elif style is Style.TOOL_SEARCH:
        assert names(first) == ["tool_search"]
        searched, called = (e.answer.tool_calls[0] for e in result.exchanges[:2])
        assert (searched.tool, searched.arguments) == ("tool_search", {"query": NEEDS["lookup_order"]})
        assert called.tool == "lookup_order"
        # As the anchor ships it: the loaded definition is in the search result, the tools list unchanged.
        assert names(result.exchanges[1].request) == ["tool_search"]
        results = [m for m in result.exchanges[1].request.messages if m.get("role") == "tool"]
        assert any('"name":"lookup_order"' in str(m["content"]) for m in results)
    elif style is Style.PTC:
        assert names(first)[0] == "run_code" and len(names(first)) < CATALOG
        assert contract_shown(first, "lookup_order")  # management off: the full SDK
        assert len(result.exchanges) == 2
    else:
        assert not contract_shown(first, "lookup_order")
        assert first_code(result).startswith(f"a = await capabilities.search({NEEDS['lookup_order']!r})\n")
        assert contract_shown(result.exchanges[1].request, "lookup_order")  # the expansion message
        assert len(result.exchanges) == 3


@pytest.mark.asyncio
@pytest.mark.needs_bwrap
async def test_a_discovered_contract_reaches_the_model_once(tmp_path: Path) -> None:
    # ADR 0107: the session delivers what a search expanded as a message (ADR 0070); the discovery program
    # returns names and candidates, so the contract is not in the tool result a second time.
    result = await run_task(SUITE, ONE_CALL, Style.PTC_PLUS_COLD, CATALOG, workdir=tmp_path, parameters=SMALL)
    assert_passed(result)
    after = result.exchanges[1].request
    texts = [str(m.get("content")) for m in after.messages]
    assert sum(text.count("async def lookup_order(") for text in texts) == 1
    assert contract_shown(after, "lookup_order")  # in the expansion message, where the model reads it
    answer = next(m for m in after.messages if m.get("role") == "tool")
    assert '"found":["lookup_order"' in str(answer["content"])


@pytest.mark.asyncio
@pytest.mark.needs_bwrap
async def test_mature_statistics_make_the_warm_up_tool_full(tmp_path: Path) -> None:
    statistics = await warm_up(SUITE, CATALOG, workdir=tmp_path, families=5, parameters=SMALL)
    assert statistics.is_file()
    cold = await run_task(SUITE, LONG_TAIL, Style.PTC_PLUS_COLD, CATALOG, workdir=tmp_path, parameters=SMALL)
    mature = await run_task(
        SUITE,
        LONG_TAIL,
        Style.PTC_PLUS_MATURE,
        CATALOG,
        workdir=tmp_path,
        parameters=LEARNED,
        statistics=statistics,
    )
    assert_passed(cold)
    assert_passed(mature)
    assert not contract_shown(cold.exchanges[0].request, "weather_forecast")
    assert first_code(cold).startswith(f"a = await capabilities.search({NEEDS['weather_forecast']!r})\n")
    assert contract_shown(mature.exchanges[0].request, "weather_forecast")
    assert "capabilities.search" not in first_code(mature)
    assert len(mature.exchanges) == len(cold.exchanges) - 1


@pytest.mark.asyncio
@pytest.mark.needs_bwrap
@pytest.mark.parametrize("style", (Style.NATIVE, Style.TOOL_SEARCH, Style.PTC_PLUS_COLD), ids=lambda s: s.value)
async def test_child_agent_runs_its_own_plan_in_the_family(tmp_path: Path, style: Style) -> None:
    result = await run_task(SUITE, CHILD, style, CATALOG, workdir=tmp_path, parameters=SMALL)
    assert_passed(result)
    roots = {e.session_id for e in result.exchanges if e.parent_session_id is None}
    children = [e for e in result.exchanges if e.parent_session_id is not None]
    assert len(roots) == 1 and children
    assert {e.parent_session_id for e in children} == roots
    assert len({e.session_id for e in children}) == 1
    assert children[-1].answer.text == "17.25"


@pytest.mark.asyncio
@pytest.mark.needs_bwrap
@pytest.mark.parametrize("style", (Style.NATIVE, Style.PTC), ids=lambda s: s.value)
async def test_mcp_task_calls_the_real_time_server(tmp_path: Path, style: Style) -> None:
    result = await run_task(SUITE, MCP, style, CATALOG, workdir=tmp_path)
    assert_passed(result)


def server_processes() -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            command = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        if parent == os.getpid() and b"mcp_server_time" in command:
            found.append(int(entry.name))
    return found


@pytest.mark.asyncio
async def test_mcp_bridge_lists_calls_and_shuts_the_server_down() -> None:
    async with McpBridge.time_server() as bridge:
        assert {t.spec.name for t in bridge.tools} == {"get_current_time", "convert_time"}
        assert {t.spec.source for t in bridge.tools} == {"mcp:time"}
        assert server_processes()
        converted = await bridge.tools[1].handler(
            {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"},
            None,  # type: ignore[arg-type]  # the bridge's body reads no context
        )
        assert isinstance(converted, dict) and converted["target"]["datetime"].endswith("21:00:00+09:00")
    assert not bridge.running
    assert server_processes() == []


@pytest.mark.asyncio
async def test_catalog_smaller_than_the_suite_is_refused(tmp_path: Path) -> None:
    with pytest.raises(CatalogTooSmall):
        await run_task(SUITE, ONE_CALL, Style.NATIVE, OWN_TOOLS - 1, workdir=tmp_path)
    with pytest.raises(StatisticsRequired):
        await run_task(SUITE, ONE_CALL, Style.PTC_PLUS_MATURE, CATALOG, workdir=tmp_path)


def calling(task_id: str, tool: str, arguments: dict[str, object]) -> Task:
    plan = TaskPlan(
        turns=(
            Turn(
                prompt="p",
                steps=(Step(id="s", need="n", tool=tool, arguments=arguments),),
                reads=(Ref("s"),),
                answer=lambda values: str(values),
            ),
        )
    )
    return Task(
        id=task_id,
        category="bug",
        prompt="p",
        setup=lambda workspace, world: None,
        oracle=lambda answer, end: Verdict(passed=True),
        plan=plan,
    )


@pytest.mark.asyncio
async def test_a_broken_plan_is_a_failed_run_not_a_crash(tmp_path: Path) -> None:
    # A plan calling a filler tool: the engine's own error (the cause) is the run's, not the failed step after it.
    result = await run_task(SUITE, calling("x-filler", filler(1)[0].name, {}), Style.NATIVE, CATALOG, workdir=tmp_path)
    assert result.error.startswith("PTC-7407") and not result.verdict.passed
    strict = calling("x-strict", "lookup_order", {"order_id": 99})
    result = await run_task(SUITE, strict, Style.NATIVE, CATALOG, workdir=tmp_path)
    assert result.error.startswith("PTC-7432") and "no order 99" in result.verdict.reason
    unplanned = Task(id="x-none", category="bug", prompt="p", setup=strict.setup, oracle=strict.oracle)
    result = await run_task(SUITE, unplanned, Style.NATIVE, CATALOG, workdir=tmp_path)
    assert result.error.startswith("PTC-7433") and not result.verdict.passed


@pytest.mark.asyncio
@pytest.mark.needs_bwrap
async def test_each_run_is_isolated_from_the_users_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PTC_MODE", "off")  # the developer's kill switch must not turn a code style native
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "mine"))

    def oracle(answer: str, end: EndState) -> Verdict:
        return Verdict(passed=answer == "5.5")

    task = Task(
        id="x-iso",
        category="one-call",
        prompt=ONE_CALL.prompt,
        setup=ONE_CALL.setup,
        oracle=oracle,
        plan=ONE_CALL.plan,
    )
    # Code mode on (else the run fails with PTC-7411) although the kill switch is set outside.
    assert_passed(await run_task(SUITE, task, Style.PTC, CATALOG, workdir=tmp_path))
    assert os.environ["PTC_MODE"] == "off" and os.environ["XDG_CONFIG_HOME"] == str(tmp_path / "mine")
    assert not (tmp_path / "mine").exists()


class ReportingModel:
    """A stand-in for a real route: answers at once and reports usage as the OpenAI client does."""

    route = "fake:real"

    def __init__(self) -> None:
        self.usage: list[RequestUsage] = []

    async def complete(self, request: ModelRequest) -> AssistantTurn:
        self.usage.append(RequestUsage(cached_input=None, uncached_input=None, output=3))
        return AssistantTurn(text="5.5")


@pytest.mark.asyncio
async def test_real_model_mode_records_the_providers_usage(tmp_path: Path) -> None:
    made: list[tuple[str, Style]] = []

    def factory(task: Task, style: Style) -> ReportingModel:
        made.append((task.id, style))
        return ReportingModel()

    result = await run_task(SUITE, ONE_CALL, Style.NATIVE, CATALOG, workdir=tmp_path, model=factory)
    assert_passed(result)
    assert made == [(ONE_CALL.id, Style.NATIVE)]
    (exchange,) = result.exchanges
    assert exchange.usage == ProviderUsage(input=None, cached_input=None, output=3)
    assert len(exchange.request.tools) == CATALOG
