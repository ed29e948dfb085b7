"""Resource attacks: memory, CPU, output, threads, disk, descriptors, and runs that outlast their timeout.

The timeout is the whole run's wall time, nested calls included (issue 8
item 7): a run settles by its deadline plus the termination grace. Elapsed
bounds below add generous room for a loaded machine; they only tell "stopped
at the deadline" from "waited for the program".
"""

from __future__ import annotations

import pytest

from .conftest import Hostile
from .guard import MIB

pytestmark = [pytest.mark.needs_bwrap]

SLACK_S = 10.0
"""Room on top of timeout + grace for a loaded 2-core machine (the failures this catches are far larger)."""


def settled_by_the_deadline(elapsed: float, timeout: float, grace: float = 3.0) -> bool:
    return elapsed < timeout + grace + SLACK_S


@pytest.mark.asyncio
async def test_a_memory_bomb_is_a_memory_error(hostile: Hostile) -> None:
    code = "blocks = []\nwhile True:\n    blocks.append(bytearray(b'x') * (16 * 1024 * 1024))\n"
    outcome = (await hostile.run(code, memory_bytes=256 * MIB)).failed("exception")
    assert "MemoryError" in outcome.message, outcome.describe()
    # The person can act on it: the limit the program hit, by its key and value.
    assert f"capped at {256 * MIB} bytes by [runtime] memory_bytes" in outcome.message, outcome.describe()


@pytest.mark.asyncio
@pytest.mark.slow
async def test_a_memory_bomb_spread_over_processes_is_bounded_by_the_run(hostile: Hostile) -> None:
    # RLIMIT_AS is per process; the run's cgroup bounds their sum (memory_bytes + /tmp).
    # Each child reports every 16 MiB block it has filled; only children still alive at the end hold theirs.
    code = """
import time
children = {}
for _ in range(6):
    reader, writer = os.pipe()
    pid = os.fork()
    if pid == 0:
        blocks = []
        try:
            for _ in range(12):
                blocks.append(bytearray(b'x') * (16 * 1024 * 1024))
                os.write(writer, b'.')
        except MemoryError:
            pass
        time.sleep(30)
        os._exit(0)
    os.close(writer)
    os.set_blocking(reader, False)
    children[pid] = reader
time.sleep(5)
held = 0
for pid, reader in children.items():
    try:
        blocks = len(os.read(reader, 1 << 16))
    except BlockingIOError:
        blocks = 0
    if os.waitpid(pid, os.WNOHANG) == (0, 0):
        held += blocks * 16
return held
"""
    held_mib = (await hostile.run(code, timeout=30, memory_bytes=256 * MIB)).ok()
    assert held_mib <= 2 * 256, held_mib  # group_memory_bytes: memory_bytes plus the /tmp allowance


@pytest.mark.asyncio
async def test_a_cpu_loop_is_stopped_at_the_deadline(hostile: Hostile) -> None:
    outcome = (await hostile.run("while True:\n    pass\n", timeout=1)).failed("timeout")
    assert settled_by_the_deadline(outcome.elapsed, 1), outcome.describe()


@pytest.mark.asyncio
async def test_a_c_level_loop_with_signals_blocked_is_stopped(hostile: Hostile) -> None:
    code = """
import re, signal
for number in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGUSR1):
    signal.signal(number, signal.SIG_IGN)
signal.pthread_sigmask(signal.SIG_BLOCK, set(signal.Signals) - {signal.SIGKILL, signal.SIGSTOP})
re.match(r'(a+)+$', 'a' * 64 + 'b')  # catastrophic backtracking, inside C, holding the GIL
"""
    outcome = (await hostile.run(code, timeout=1)).failed("timeout")
    assert settled_by_the_deadline(outcome.elapsed, 1), outcome.describe()


@pytest.mark.asyncio
async def test_a_program_that_stops_itself_is_stopped_at_the_deadline(hostile: Hostile) -> None:
    code = "import signal\nos.kill(os.getpid(), signal.SIGSTOP)\nreturn 'resumed'"
    outcome = (await hostile.run(code, timeout=1)).failed("timeout")
    assert settled_by_the_deadline(outcome.elapsed, 1), outcome.describe()


@pytest.mark.asyncio
async def test_a_print_flood_hits_the_output_limit(hostile: Hostile) -> None:
    # The host keeps up to max_output_bytes of logs and copies them into the result: allow ten times that.
    code = "while True:\n    print('x' * 4096)\n"
    outcome = (await hostile.run(code, timeout=60, memory_bound=640 * MIB)).failed("output-limit")
    assert sum(len(entry["text"]) for entry in outcome.logs) <= 64 * MIB


@pytest.mark.asyncio
@pytest.mark.parametrize(
    "code",
    [
        "import subprocess\nsubprocess.run(['yes', MARKER])\n",
        "import logging\nwhile True:\n    logging.warning('y' * 4096)\n",
        "while True:\n    sys.stderr.write('z' * 4096)\n",
    ],
    ids=["subprocess", "logging", "stderr"],
)
async def test_other_floods_hit_the_output_limit(hostile: Hostile, code: str) -> None:
    outcome = (await hostile.run(code, timeout=30, max_output_bytes=1 * MIB)).failed("output-limit")
    assert sum(len(entry["text"].encode()) for entry in outcome.logs) <= 1 * MIB


@pytest.mark.asyncio
async def test_a_huge_exception_message_is_charged_to_the_output_budget(hostile: Hostile) -> None:
    # Issue 8 item 12: message and traceback are charged and truncated like logs.
    code = "raise ValueError('x' * 100_000)"
    outcome = (await hostile.run(code, max_output_bytes=1000)).failed("exception", "output-limit")
    program_bytes = outcome.message.count("x") + outcome.traceback.count("x")
    assert program_bytes <= 1000, f"{program_bytes} bytes of the program's message reached the result"


@pytest.mark.asyncio
@pytest.mark.slow
async def test_a_100_mb_exception_message_stays_within_the_default_budget(hostile: Hostile) -> None:
    outcome = (await hostile.run("raise ValueError('x' * 100_000_000)", memory_bound=1024 * MIB)).failed(
        "exception", "output-limit"
    )
    assert outcome.message.count("x") + outcome.traceback.count("x") <= 64 * MIB


@pytest.mark.asyncio
async def test_thread_creation_stops_at_the_process_cap(hostile: Hostile) -> None:
    code = """
import threading, time
stop = threading.Event()
started = 0
try:
    while started < 5000:
        threading.Thread(target=stop.wait, daemon=True).start()
        started += 1
except RuntimeError as error:
    result = [started, str(error)]
else:
    result = [started, 'no limit']
stop.set()
return result
"""
    started, error = (await hostile.run(code)).ok()
    assert error == "can't start new thread" and started < 64, (started, error)


@pytest.mark.asyncio
async def test_filling_tmp_stops_at_its_size(hostile: Hostile) -> None:
    code = """
written = 0
chunk = b'x' * (1024 * 1024)
try:
    with open('/tmp/fill', 'wb') as handle:
        while written < 2048 * len(chunk):
            handle.write(chunk)
            handle.flush()
            written += len(chunk)
    return [written, 'no limit']
except OSError as error:
    return [written, errname(error.errno)]
"""
    written, error = (await hostile.run(code, memory_bytes=256 * MIB)).ok()
    assert error == "ENOSPC" and written <= 256 * MIB, (written, error)


@pytest.mark.asyncio
async def test_a_file_larger_than_the_file_size_limit_is_refused(hostile: Hostile) -> None:
    code = """
import signal
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
chunk = b'x' * (1024 * 1024)
written = 0
try:
    with open('big.bin', 'wb', buffering=0) as handle:
        while written < 256 * len(chunk):
            written += handle.write(chunk)
    return [written, 'no limit']
except OSError as error:
    return [written, errname(error.errno)]
"""
    written, error = (await hostile.run(code, max_file_bytes=16 * MIB)).ok()
    assert error == "EFBIG" and written <= 16 * MIB, (written, error)
    assert (hostile.workspace / "big.bin").stat().st_size <= 16 * MIB


@pytest.mark.asyncio
async def test_descriptor_exhaustion_stops_at_the_limit(hostile: Hostile) -> None:
    code = """
handles = []
try:
    while len(handles) < 100_000:
        handles.append(open('/dev/null'))
    return [len(handles), 'no limit']
except OSError as error:
    return [len(handles), errname(error.errno)]
"""
    opened, error = (await hostile.run(code)).ok()
    assert error == "EMFILE" and opened <= 256, (opened, error)


@pytest.mark.asyncio
async def test_a_nested_call_is_cancelled_at_the_deadline(hostile: Hostile) -> None:
    # Issue 8 item 7: a nested sleep(20) under --timeout 3 returned at 20.7 s.
    outcome = (await hostile.run("return await tools.nap(seconds=30)", timeout=2)).failed("timeout")
    assert settled_by_the_deadline(outcome.elapsed, 2), outcome.describe()
    assert hostile.tool_log.cancelled == 1, "the tool body never saw the cancellation"


@pytest.mark.asyncio
async def test_a_nested_call_that_ignores_cancellation_is_abandoned(hostile: Hostile) -> None:
    outcome = (await hostile.run("return await tools.stubborn_nap(seconds=30)", timeout=2)).failed("timeout")
    assert settled_by_the_deadline(outcome.elapsed, 2), outcome.describe()


@pytest.mark.asyncio
@pytest.mark.slow
async def test_a_reply_the_program_cannot_hold_fails_the_call(hostile: Hostile) -> None:
    # Issue 8 item 11: a 100 MB reply the child cannot decode was swallowed and the run timed out.
    code = "reply = await tools.blob(bytes=100_000_000)\nreturn len(reply)"
    outcome = await hostile.run(code, timeout=60, memory_bytes=256 * MIB, memory_bound=1024 * MIB)
    outcome.failed("exception", "output-limit")
    assert outcome.elapsed < 40, outcome.describe()
