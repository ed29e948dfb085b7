"""t10 — an MCP task: the real time server's ``convert_time``, between two zones without daylight saving time."""

from __future__ import annotations

import datetime
import re
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import orjson

from hookspecs.types import JSONValue
from ptc_plus.evaluation.task import Answer, EndState, Task, Verdict
from ptc_plus.evaluation.task_plan import Ref, Step, TaskPlan, Turn

from .oracles import verdict

SOURCE, TARGET, TIME = "Asia/Tokyo", "Asia/Kolkata", "09:30"
PROMPT = f"When it is {TIME} in Tokyo, what time is it in Kolkata, India?"
ARGUMENTS = {"source_timezone": SOURCE, "time": TIME, "target_timezone": TARGET}


def setup(workspace: Path, world: Any) -> None:
    """Nothing to write: the time server is stateless."""


def target_clock(value: Any) -> str:
    """``HH:MM`` of the conversion's target, from the server's structured result or its JSON text."""
    if isinstance(value, str):
        try:
            value = orjson.loads(value)
        except orjson.JSONDecodeError:
            return str(re.findall(r"T(\d\d:\d\d)", value)[-1])
    for key in ("structuredContent", "structured_content", "result"):
        if isinstance(value, dict) and key in value and "target" not in value:
            value = value[key]
    return str(value["target"]["datetime"])[11:16]


def _answer(clock: str) -> Answer:
    return Answer(text=f"When it is {TIME} in Tokyo it is {clock} in Kolkata.")


def oracle(answer: str, end: EndState) -> Verdict:
    # Neither zone observes daylight saving time, so the date of the run does not matter.
    hours, minutes = map(int, TIME.split(":"))
    source = datetime.datetime.combine(datetime.date.today(), datetime.time(hours, minutes), ZoneInfo(SOURCE))
    clock = source.astimezone(ZoneInfo(TARGET)).strftime("%H:%M")
    clocks = set(re.findall(r"\b\d{1,2}:\d\d\b", answer)) - {TIME}
    return verdict(
        answer,
        [(clock in answer, f"the time {clock} is missing"), (clocks <= {clock}, f"other times: {sorted(clocks)}")],
    )


def _plan_answer(values: tuple[JSONValue, ...]) -> str:
    return _answer(target_clock(values[0])).text


PLAN = TaskPlan(
    turns=(
        Turn(
            prompt=PROMPT,
            steps=(
                Step(
                    id="converted",
                    need="convert a time of day from one city's time zone to another's",
                    tool="convert_time",
                    arguments=dict(ARGUMENTS),
                ),
            ),
            reads=(Ref("converted"),),
            answer=_plan_answer,
        ),
    )
)


TASK = Task(
    id="t10-mcp-time",
    category="mcp",
    prompt=PROMPT,
    setup=setup,
    oracle=oracle,
    plan=PLAN,
)
