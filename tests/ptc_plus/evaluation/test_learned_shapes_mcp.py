"""Issue 28's must-show: a program written against a learned ``TypedDict`` runs without a probing round in the
evaluation, on a real MCP server's tool that has no output schema (ADR 0109).

The real ``mcp-server-time`` runs behind the evaluation's bridge as a host whose MCP client reads text content
only (``structured=False``, as clients before the protocol's structured output): ``convert_time`` then has no
output schema and answers JSON text. A warm-up session (a different question) calls it; the statistics store
learns its shape; a later PTC Plus mature session's request shows ``convert_time`` as a learned ``TypedDict``,
and its one program indexes the first result to make the second call. The same task cold (nothing learned)
pays the probing round: the program stops before the field and returns the raw result.
"""

from __future__ import annotations

import datetime
import re
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from hookspecs import ToolDefinition
from hookspecs.types import JSONValue
from ptc_plus.evaluation.exchange import RunResult
from ptc_plus.evaluation.mcp_bridge import McpBridge
from ptc_plus.evaluation.runner import run_task, warm_up
from ptc_plus.evaluation.task import EndState, Style, Suite, Task, Verdict
from ptc_plus.evaluation.task_plan import Ref, Step, TaskPlan, Turn, derive
from ptc_plus.sdk import LEARNED_MARK, learned_functions
from ptc_plus.statistics import workspace_store
from tests.ptc_plus.evaluation.tiny_suite import filler

CATALOG = 20
SOURCE, MIDDLE, TARGET, TIME = "Asia/Tokyo", "Asia/Kolkata", "UTC", "09:30"
"""No zone here observes daylight saving time: the clocks do not depend on the day of the run."""


def _clock(converted: Any) -> JSONValue:
    return converted["target"]["datetime"][11:16]


def expected(source: str, time: str, target: str) -> str:
    hours, minutes = map(int, time.split(":"))
    start = datetime.datetime.combine(datetime.date.today(), datetime.time(hours, minutes), ZoneInfo(source))
    return start.astimezone(ZoneInfo(target)).strftime("%H:%M")


def _says(*clocks: str) -> Any:
    def oracle(answer: str, end: EndState) -> Verdict:
        missing = [c for c in clocks if c not in re.findall(r"\d\d:\d\d", answer)]
        return Verdict(passed=not missing, reason=f"missing {missing} in {answer!r}" if missing else "")

    return oracle


MIDDLE_CLOCK = derive(Ref("middle"), _clock)
TWO_HOPS = TaskPlan(
    turns=(
        Turn(
            prompt=f"When it is {TIME} in Tokyo, what time is it in Kolkata, and what is that time in UTC?",
            steps=(
                Step(
                    id="middle",
                    need="convert a time of day between time zones",
                    tool="convert_time",
                    arguments={"source_timezone": SOURCE, "time": TIME, "target_timezone": MIDDLE},
                ),
                Step(
                    id="utc",
                    need="convert a time of day between time zones",
                    tool="convert_time",
                    arguments={"source_timezone": MIDDLE, "time": MIDDLE_CLOCK, "target_timezone": TARGET},
                ),
            ),
            reads=(MIDDLE_CLOCK, Ref("utc", ("target", "datetime"))),
            answer=lambda values: f"{values[0]} in Kolkata, {str(values[1])[11:16]} UTC",
        ),
    )
)
MEASURED = Task(
    id="m01-two-hops",
    category="mcp",
    prompt=TWO_HOPS.turns[0].prompt,
    setup=lambda workspace, world: None,
    oracle=_says(expected(SOURCE, TIME, MIDDLE), expected(SOURCE, TIME, TARGET)),
    plan=TWO_HOPS,
)
WARM = TaskPlan(
    turns=(
        Turn(
            prompt="When it is 12:00 in Dubai, what time is it in Tokyo?",
            steps=(
                Step(
                    id="tokyo",
                    need="convert a time of day between time zones",
                    tool="convert_time",
                    arguments={"source_timezone": "Asia/Dubai", "time": "12:00", "target_timezone": SOURCE},
                ),
            ),
            reads=(Ref("tokyo"),),
            answer=lambda values: f"{_clock(values[0])} in Tokyo",
        ),
    )
)
WARM_UP = Task(
    id="w01-dubai",
    category="mcp",
    prompt=WARM.turns[0].prompt,
    setup=lambda workspace, world: None,
    oracle=_says(expected("Asia/Dubai", "12:00", SOURCE)),
    plan=WARM,
)


def _no_tools(workspace: Path, world: Any) -> list[ToolDefinition]:
    return []


SUITE = Suite(
    version="learned-mcp-1",
    tasks=(MEASURED,),
    warmup=(WARM_UP,),
    world=lambda workspace: None,
    tools=_no_tools,
    filler=filler,
)


def tool_programs(result: RunResult) -> list[str]:
    """The programs that call a tool (a discovery program, if the plan showed too little, calls none)."""
    found = [str(c.arguments["code"]) for e in result.exchanges for c in e.answer.tool_calls if c.tool == "run_code"]
    return [code for code in found if "tools." in code]


def passed(result: RunResult) -> None:
    assert result.error == "" and result.not_runnable == ""
    assert result.verdict == Verdict(passed=True), result.verdict.reason


@pytest.mark.asyncio
@pytest.mark.needs_bwrap
async def test_a_program_written_against_a_learned_typeddict_of_a_real_mcp_tool_runs_without_probing(
    tmp_path: Path,
) -> None:
    async with McpBridge.time_server() as structured:
        published = {d.spec.name: d.spec.output_schema for d in structured.tools}
    assert published["convert_time"] is not None  # the server publishes one; a text-only client never sees it
    async with McpBridge.time_server(structured=False) as bridge:
        (convert,) = [d.spec for d in bridge.tools if d.spec.name == "convert_time"]
        assert convert.output_schema is None and convert.source == "mcp:time"

        cold = await run_task(SUITE, MEASURED, Style.PTC_PLUS_COLD, CATALOG, workdir=tmp_path, mcp=bridge)
        passed(cold)
        statistics = await warm_up(SUITE, CATALOG, workdir=tmp_path / "warm", families=1, mcp=bridge)
        mature = await run_task(
            SUITE, MEASURED, Style.PTC_PLUS_MATURE, CATALOG, workdir=tmp_path, statistics=statistics, mcp=bridge
        )
        passed(mature)

    # What the warm-up learned is a shape: field names and types, none of the values it saw.
    store = workspace_store(statistics.parent.parent)
    (learned,) = [found for found in store.read().all_learned() if found.identity.endswith("convert_time")]
    assert learned.results == 1 and set(learned.shape["properties"]) == {"source", "target", "time_difference"}
    assert "Asia/Dubai" not in statistics.read_text(encoding="utf-8")

    # Cold: no shape shown, so the first program stops before the field the second call needs: a probing round.
    first, second = tool_programs(cold)
    assert first.count("tools.convert_time(") == 1 and first.endswith("return {'middle': v_middle}")
    assert second.count("tools.convert_time(") == 1
    # Mature: the request shows convert_time's learned TypedDict, and one program makes both calls.
    request = next(e.request for e in mature.exchanges if "tools." in str(e.answer.tool_calls))
    contracts = [request.system, *(str(m.get("content")) for m in request.messages if m.get("role") == "system")]
    shown = "\n".join(text for text in contracts if "async def convert_time(" in text)
    assert "convert_time" in learned_functions(shown)
    assert f"{LEARNED_MARK} (1 results since {learned.since}" in shown and "-> ConvertTimeResult:" in shown
    (program,) = tool_programs(mature)
    assert program.count("tools.convert_time(") == 2
    assert "def _clock(converted):" in program and "time=_clock(v_middle)" in program
    assert program.endswith(
        "return {'clock_middle': _clock(v_middle), 'utc_target_datetime': v_utc['target']['datetime']}"
    )
    assert len(mature.exchanges) == len(cold.exchanges) - 1  # one round fewer: the probe
