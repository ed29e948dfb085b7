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


# -- the session log -------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_large_nested_calls_do_not_grow_the_session_log_or_the_host(hostile: Hostile) -> None:
    # Issue 25 item 5: 160 nested calls of 8 MB in 25 s grew the session log to 2.4 GB on disk and the
    # host's memory by 2.6 GB; it logged and kept every argument and result whole. 24 calls of 4 MB
    # sent and returned logged 192 MB and held them all.
    code = "big = 'x' * (4 * 1024 * 1024)\nfor _ in range(24):\n    assert await tools.echo(text=big) == big\nreturn 'ok'"
    outcome = await hostile.run(code, timeout=120, memory_bound=96 * MIB)
    assert outcome.ok() == "ok"
    assert session_log_bytes(hostile) <= 2 * MIB, f"the session log holds {session_log_bytes(hostile) // MIB} MiB"
    started = [e["data"] for e in session_events(hostile) if e["type"] == "tool-started" and e["data"]["parent_call_id"]]
    assert len(started) == 24
    # Elided, not dropped: the digest names what was sent.
    assert all(d["arguments"] is None and d["arguments_digest"]["bytes"] > 4 * MIB for d in started), started[0]


@pytest.mark.asyncio
async def test_many_small_nested_calls_log_only_their_run_s_share_whole(hostile: Hostile) -> None:
    # Each call is under the whole-value cap; together they are not: the run's share of whole values is.
    code = "text = 'y' * 12_000\nfor _ in range(200):\n    await tools.echo(text=text)\nreturn 'ok'"
    assert (await hostile.run(code, timeout=120)).ok() == "ok"
    events = [e["data"] for e in session_events(hostile) if e["type"] in ("tool-started", "tool-settled")]
    nested = [d for d in events if d["parent_call_id"]]
    whole = [d for d in nested if "arguments_digest" not in d and "result_digest" not in d]
    assert 0 < len(whole) < len(nested) == 400
    assert session_log_bytes(hostile) <= 2 * MIB


# -- argument validation -------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_arguments_with_many_errors_cost_the_host_a_few(hostile: Hostile) -> None:
    # Issue 25 item 5: one 1.4 MB nested call cost 2.6 GB and put the deadline 11.7 s late: every JSON
    # Schema error was collected (and reported, and logged) on the event loop.
    code = """
try:
    await tools.tally(numbers=['not a number'] * 150_000)
except ToolCallError as error:
    return [error.code, str(error).count('is not of type')]
"""
    outcome = await hostile.run(code, timeout=60, memory_bound=96 * MIB)
    code_, reported = outcome.ok()
    assert code_ == "invalid-arguments"
    assert 1 <= reported <= 5, f"{reported} problems reported"


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
