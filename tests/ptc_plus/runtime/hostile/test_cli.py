"""Hostile programs through the real CLI, ``ptc-plus exec --json``, in a subprocess.

For programs that could stall the host's event loop or blow up its memory
(issue 8 items 6, 7, 8 and 9): the host is another process here, so a stall
cannot hang the suite (it is killed after a guard time and reported) and
its memory is capped (``prlimit --as``) and sampled while it runs.
"""

from __future__ import annotations

import pytest

from .conftest import Hostile
from .guard import MIB

pytestmark = [pytest.mark.needs_bwrap]

HOSTILE_TOOLS = "tests.ptc_plus.runtime.hostile.host_tools:factory"
GRACE_S = 3.0
SLACK_S = 10.0


def test_kernel_settings_through_the_cli(hostile_cli: Hostile) -> None:
    code = """
return {
    'core_pattern': attempt(lambda: open('/proc/sys/kernel/core_pattern', 'w').write('core.' + MARKER)),
    'swappiness': attempt(lambda: open('/proc/sys/vm/swappiness', 'w').write('37')),
}
"""
    results = hostile_cli.cli(code, timeout=20, guard_s=60).ok()
    # Under gVisor /proc/sys is an empty read-only directory (ADR 0127): the settings are not even there.
    refused = {"EROFS", "EACCES", "EPERM"} | ({"ENOENT"} if hostile_cli.executor == "gvisor" else set())
    assert set(results.values()) <= refused, results


def test_a_fifo_in_the_workspace_does_not_stall_the_host(hostile_cli: Hostile) -> None:
    # Issue 8 item 8: search_files opened the FIFO on the event loop and blocked the host (and its timer) forever.
    code = """
open('notes.txt', 'w').write('needle here\\n')
os.mkfifo('a-fifo')
os.mkfifo('needle.fifo')
found = await tools.search_files(query='needle')
listed = await tools.list_files()
return [sorted(m['path'] for m in found['matches']), sorted(e['path'] for e in listed['entries'])]
"""
    timeout = 10.0
    matches, _listed = hostile_cli.cli(code, timeout=timeout, guard_s=timeout + GRACE_S + SLACK_S).ok()
    assert matches == ["notes.txt"]


@pytest.mark.slow
def test_a_nested_call_does_not_outlive_the_cli_timeout(hostile_cli: Hostile) -> None:
    # Issue 8 item 7, as reported: a nested sleep under `ptc-plus exec --timeout 3`.
    outcome = hostile_cli.cli(
        "return await tools.nap(seconds=30)", timeout=3, guard_s=3 + GRACE_S + SLACK_S, tools=HOSTILE_TOOLS
    )
    outcome.failed("timeout")


@pytest.mark.slow
def test_a_90_mb_forged_done_frame_is_invalid_output_within_the_timeout(hostile_cli: Hostile) -> None:
    # Issue 8 item 9: a done frame of [[],[],...] cost 38 s under a 10 s timeout and 6.5 GB of host memory.
    code = """
_, out = control_fds()
body = b'{"type":"done","ok":true,"value":[' + b'[],' * 30_000_000 + b'[]]}'
data = memoryview(__import__('struct').pack('>I', len(body)) + body)
while data:
    data = data[os.write(out, data):]
import time
time.sleep(60)
"""
    timeout = 10.0
    outcome = hostile_cli.cli(
        code,
        timeout=timeout,
        guard_s=timeout + GRACE_S + SLACK_S,
        address_space=3 * 1024 * MIB,
        memory_bound=1024 * MIB,
    )
    # Under gVisor the 90 MB cross its kernel and the socket channel (ADR 0127) and may not all arrive within the
    # 10 s deadline: the frame is then never whole, and the run ends at the deadline, the host as bounded.
    outcome.failed("invalid-output", *(("timeout",) if hostile_cli.executor == "gvisor" else ()))


@pytest.mark.slow
def test_replies_never_read_do_not_exhaust_the_cli_host(hostile_cli: Hostile) -> None:
    # Issue 8 item 6 as reported: 100 forged read_file calls on a 40 MB file, replies never read (4-6.8 GB).
    # The host may hold max_message_bytes (128 MiB) of unread replies, and up to max_parallel (8) read_file
    # bodies may be working on the file at once, each holding it a few times over: 2 GiB, not gigabytes more.
    line = "z" * 99_999
    (hostile_cli.workspace / "big.txt").write_text((line + "\n") * 400)
    code = (
        "_, out = control_fds()\n"
        "for call_id in range(1, 101):\n"
        "    os.write(out, frame({'type': 'call', 'id': call_id, 'tool': 'read_file', 'args': {'path': 'big.txt'}}))\n"
        "import time\ntime.sleep(60)\n"
    )
    timeout = 20.0
    outcome = hostile_cli.cli(
        code,
        timeout=timeout,
        guard_s=timeout + GRACE_S + SLACK_S,
        address_space=4 * 1024 * MIB,
        memory_bound=2048 * MIB,
    )
    outcome.failed("protocol")


@pytest.mark.slow
def test_an_oversized_repl_journal_is_not_read_into_the_cli_hosts_memory(hostile_cli: Hostile) -> None:
    # Issue 25 item 5 as reported: a 378 MB journal took the next `exec --session` past 3 GB of host memory.
    # 160 MiB of valid records (compaction's `hidden`): read and decoded they cost the host well over 1 GiB.
    session = hostile_cli.scope / "session"
    session.mkdir(mode=0o700)
    line = b'{"call_ids":[' + b'"c",' * 99 + b'"c"],"type":"hidden","v":1}\n'
    with (session / "journal.jsonl").open("wb") as handle:
        for _ in range(160 * MIB // len(line)):
            handle.write(line)
    outcome = hostile_cli.cli(
        "return 1", timeout=20, guard_s=20 + GRACE_S + SLACK_S, memory_bound=384 * MIB, args=("--session", str(session))
    )
    assert outcome.ok() == 1
    assert any("PTC-R016" in note or "too large" in note for note in outcome.notes), outcome.notes
    assert (session / "journal.oversized.jsonl").stat().st_size >= 160 * MIB - len(line)
