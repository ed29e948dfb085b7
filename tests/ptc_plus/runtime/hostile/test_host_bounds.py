"""Work a program makes the host do for its nested calls is bounded (issue 25 items 5 and 7b, ADR 0087).

Each call stays under its own limits; together they must not exhaust the
host: what the session log keeps on disk and in memory, what argument
validation costs, what one spill read decodes, and how long the host drains
calls the program left running after it returned.
"""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from .conftest import Hostile
from .guard import MIB

pytestmark = [pytest.mark.needs_bwrap]


def session_log_bytes(hostile: Hostile) -> int:
    """Bytes of every session log the run's host wrote (the harness's host keeps its state in the workspace)."""
    return sum(path.stat().st_size for path in (hostile.workspace / ".agent-host" / "sessions").glob("*.jsonl"))


def session_events(hostile: Hostile) -> list[dict[str, object]]:
    (path,) = (hostile.workspace / ".agent-host" / "sessions").glob("*.jsonl")
    return [orjson.loads(line) for line in Path(path).read_bytes().splitlines()]


# -- the drain after a normal end -----------------------------------------------------------------


@pytest.mark.asyncio
async def test_a_nested_call_left_running_is_cancelled_at_the_deadline(hostile: Hostile) -> None:
    # Issue 25 item 7b: an un-awaited nested sleep(30) held a 3 s run open for 32 s.
    code = "import asyncio\nasyncio.ensure_future(tools.nap(seconds=20))\nawait asyncio.sleep(0.2)\nreturn 'left early'"
    assert (await hostile.run(code, timeout=2)).ok() == "left early"
    assert hostile.tool_log.started == 1
    assert hostile.tool_log.cancelled == 1, "the body did not see the cancellation"
    assert hostile.tool_log.finished == 0, "the host drained the call past the run's deadline"
    settled = [e["data"] for e in session_events(hostile) if e["type"] == "tool-settled"]
    nested = [d["result"]["status"] for d in settled if d["call_id"] == "direct-1:ptc:1"]
    assert nested == ["cancelled"], nested


@pytest.mark.asyncio
async def test_a_nested_call_left_running_that_ignores_cancellation_is_abandoned(
    hostile: Hostile, caplog: pytest.LogCaptureFixture
) -> None:
    code = (
        "import asyncio\nasyncio.ensure_future(tools.stubborn_nap(seconds=20))\n"
        "await asyncio.sleep(0.2)\nreturn 'left early'"
    )
    with caplog.at_level("WARNING", logger="ptc_plus.runtime.lane"):
        assert (await hostile.run(code, timeout=2)).ok() == "left early"
    assert hostile.tool_log.cancelled >= 1, "the body was never told"
    assert hostile.tool_log.finished == 0, "the outer call waited for the body"
    reported = [r.getMessage() for r in caplog.records if "direct-1:ptc:1" in r.getMessage()]
    assert reported and "abandoned" in reported[0], caplog.text
    settled = [e["data"] for e in session_events(hostile) if e["type"] == "tool-settled"]
    nested = [d["result"] for d in settled if d["call_id"] == "direct-1:ptc:1"]
    assert [(r["status"], r["error"]["code"]) for r in nested] == [("cancelled", "cancelled")], nested
