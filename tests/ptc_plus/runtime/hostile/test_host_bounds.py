"""Work a program makes the host do for its nested calls is bounded (issue 25 items 5 and 7b, ADR 0087).

Each call stays under its own limits; together they must not exhaust the
host: what the session log keeps on disk and in memory, what argument
validation costs, what one spill read decodes, and how long the host drains
calls the program left running after it returned.
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path
from typing import Any

import mcp_types as types
import orjson
import pytest
from mcp import Client, StdioServerParameters

from hookspecs.reference.spill import FileSpillStore
from ptc_plus.preview import read_spill_definition
from tests.scaffolding import clean_environment

from .conftest import Hostile
from .guard import MIB

pytestmark = [pytest.mark.needs_bwrap]


def session_log_bytes(hostile: Hostile) -> int:
    """Bytes of every session log the run's host wrote (the harness's host keeps its state in the workspace)."""
    return sum(path.stat().st_size for path in (hostile.workspace / ".agent-host" / "sessions").glob("*.jsonl"))


def session_events(hostile: Hostile) -> list[dict[str, Any]]:
    (path,) = (hostile.workspace / ".agent-host" / "sessions").glob("*.jsonl")
    return [orjson.loads(line) for line in Path(path).read_bytes().splitlines()]


def first_nested_id(events: list[dict[str, Any]]) -> str:
    """The id of the first nested call of the session's ``run_code`` call (ids carry the session, ADR 0089)."""
    outer = next(
        e["data"]["call_id"] for e in events if e["type"] == "tool-started" and e["data"]["tool"] == "run_code"
    )
    return f"{outer}:ptc:1"


# -- the session log -------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_large_nested_calls_do_not_grow_the_session_log_or_the_host(hostile: Hostile) -> None:
    # Issue 25 item 5: 160 nested calls of 8 MB in 25 s grew the session log to 2.4 GB on disk and the
    # host's memory by 2.6 GB; it logged and kept every argument and result whole. 24 calls of 4 MB
    # sent and returned logged 192 MB and held them all.
    code = (
        "big = 'x' * (4 * 1024 * 1024)\nfor _ in range(24):\n    assert await tools.echo(text=big) == big\nreturn 'ok'"
    )
    outcome = await hostile.run(code, timeout=120, memory_bound=96 * MIB)
    assert outcome.ok() == "ok"
    assert session_log_bytes(hostile) <= 2 * MIB, f"the session log holds {session_log_bytes(hostile) // MIB} MiB"
    started = [
        e["data"] for e in session_events(hostile) if e["type"] == "tool-started" and e["data"]["parent_call_id"]
    ]
    assert len(started) == 24
    # Elided, not dropped: the digest names what was sent.
    assert all(d["arguments"] is None and d["arguments_digest"]["bytes"] > 4 * MIB for d in started), started[0]
    settled = [
        e["data"] for e in session_events(hostile) if e["type"] == "tool-settled" and e["data"]["parent_call_id"]
    ]
    assert all(d["result"]["status"] == "ok" and d["result"]["value"] is None for d in settled), settled[0]
    assert all(d["result_digest"]["bytes"] > 4 * MIB for d in settled)


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


# -- mcp-serve's search_capabilities ----------------------------------------------------------


def _process_with(variable: str) -> int:
    """The pid of the (one) process whose environment holds ``variable`` (``NAME=value``)."""
    needle = variable.encode() + b"\0"
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/environ", "rb") as handle:
                    if needle in handle.read():
                        found.append(int(entry))
            except OSError:
                continue
    assert len(found) == 1, found
    return found[0]


def _memory_kib(pid: int, field: str) -> int:
    with open(f"/proc/{pid}/status") as handle:
        for line in handle:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise LookupError(field)


@pytest.mark.asyncio
async def test_a_huge_search_capabilities_query_is_refused_by_mcp_serve(tmp_path: Path) -> None:
    # Issue 25 item 5: search_capabilities had no query bound (100k characters: 1.6 GB; 2M: past 3 GB),
    # where a program's capabilities.search takes at most 1000 characters (PTC-2008 beyond).
    workspace = tmp_path / "workspace"
    (workspace / ".ptc-plus").mkdir(parents=True)
    (workspace / ".ptc-plus" / "config.toml").write_text(
        'version = 1\n\n[management]\nenabled = true\n\n[capabilities."host:convert_units"]\ndisclosure = "on-demand"\n'
    )
    user = tmp_path / "xdg" / "ptc-plus" / "config.toml"
    user.parent.mkdir(parents=True)
    user.write_text('version = 1\n\n[runtime]\npolicy = "danger-full-access"\n')
    env = clean_environment(tmp_path)
    marker = f"XDG_CONFIG_HOME={tmp_path / 'xdg'}"
    cli = str(Path(sys.executable).with_name("ptc-plus"))
    params = StdioServerParameters(
        command=cli, args=["mcp-serve", "--workspace", str(workspace), "--tools", "demo"], env=env, cwd=str(workspace)
    )
    async with Client(params, mode="legacy", read_timeout_seconds=300) as client:  # type: ignore[arg-type]
        warm = await client.call_tool("search_capabilities", {"query": "convert units of length"})
        pid = _process_with(marker)
        before = _memory_kib(pid, "VmRSS")
        with open(f"/proc/{pid}/clear_refs", "w") as handle:
            handle.write("5")  # the peak starts again from here
        huge = await client.call_tool("search_capabilities", {"query": "convert units of length " * 1600})
        growth = (_memory_kib(pid, "VmHWM") - before) * 1024
    assert warm.is_error is False
    first = huge.content[0]
    assert isinstance(first, types.TextContent)
    assert growth <= 32 * MIB, f"the server's memory grew by {growth // MIB} MiB"
    assert huge.is_error is True and first.text.startswith("PTC-2008"), first.text[:500]


# -- read_spill --------------------------------------------------------------------------------


def bytes_read() -> int:
    """Bytes this process (the host) has read through read(2) and friends so far (``rchar``)."""
    with open("/proc/self/io") as handle:
        return next(int(line.split()[1]) for line in handle if line.startswith("rchar:"))


@pytest.mark.asyncio
async def test_reads_of_a_large_spill_decode_only_what_they_return(hostile: Hostile) -> None:
    # Issue 25 item 5: each read_spill decoded the whole spill on the event loop (300 reads of 32 KB from
    # a 60 MB spill: 24 CPU-s). 40 reads of 32,000 characters from a 30 MB spill read 1.2 GB before.
    text = "".join(f"line {n} \N{EURO SIGN}\n" for n in range(2_800_000))  # multi-byte characters: offsets are chars
    assert len(text.encode()) > 30 * 1024 * 1024
    handle = FileSpillStore(hostile.workspace / ".agent-host" / "spill").put(text)
    offsets = [len(text) - 1_000_000 + n * 20_011 for n in range(40)]
    code = (
        f"import hashlib\nout = []\nfor offset in {offsets!r}:\n"
        f"    got = await tools.read_spill(handle={handle!r}, offset=offset, limit=32000)\n"
        "    out.append(hashlib.sha256(got['text'].encode()).hexdigest())\nreturn out"
    )
    before = bytes_read()
    outcome = await hostile.run(code, timeout=120, memory_bound=64 * MIB, extra_tools=[read_spill_definition()])
    read = bytes_read() - before
    expected = [hashlib.sha256(text[o : o + 32000].encode()).hexdigest() for o in offsets]
    assert outcome.ok() == expected
    assert read <= 32 * MIB, f"the host read {read // MIB} MiB for 40 reads of 32,000 characters"


# -- the drain after a normal end -----------------------------------------------------------------


@pytest.mark.asyncio
async def test_a_nested_call_left_running_is_cancelled_at_the_deadline(hostile: Hostile) -> None:
    # Issue 25 item 7b: an un-awaited nested sleep(30) held a 3 s run open for 32 s.
    code = "import asyncio\nasyncio.ensure_future(tools.nap(seconds=20))\nawait asyncio.sleep(0.2)\nreturn 'left early'"
    assert (await hostile.run(code, timeout=2)).ok() == "left early"
    assert hostile.tool_log.started == 1
    assert hostile.tool_log.cancelled == 1, "the body did not see the cancellation"
    assert hostile.tool_log.finished == 0, "the host drained the call past the run's deadline"
    events = session_events(hostile)
    settled = [e["data"] for e in events if e["type"] == "tool-settled"]
    nested = [d["result"]["status"] for d in settled if d["call_id"] == first_nested_id(events)]
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
    events = session_events(hostile)
    reported = [r.getMessage() for r in caplog.records if first_nested_id(events) in r.getMessage()]
    assert reported and "abandoned" in reported[0], caplog.text
    settled = [e["data"] for e in events if e["type"] == "tool-settled"]
    nested = [d["result"] for d in settled if d["call_id"] == first_nested_id(events)]
    assert [(r["status"], r["error"]["code"]) for r in nested] == [("cancelled", "cancelled")], nested
