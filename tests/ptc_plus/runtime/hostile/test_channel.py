"""Channel abuse: the program finds the worker's control pipe ends in ``/proc/self/fd`` and writes its own frames.

A malformed or oversized frame, a frame out of order or for a tool outside
the namespace ends the run with ``protocol`` and is never dispatched; a
well-formed forged ``done`` is just a way of returning a value (the program
owns its value). Replies a program never reads must not pile up in the host
(issue 8 item 6): the guard bounds the host's memory for every run.
"""

from __future__ import annotations

from typing import Any

import pytest

from .conftest import Hostile
from .guard import MIB

pytestmark = [pytest.mark.needs_bwrap]

SLEEP = "import time\ntime.sleep(30)\n"
"""Program text: block the worker's event loop, so it never reads a reply or sends its own ``done``."""


async def _protocol(hostile: Hostile, code: str, **limits: Any) -> str:
    outcome = (await hostile.run(code, timeout=20, **limits)).failed("protocol")
    assert outcome.calls == 0, outcome.describe()  # nothing forged reached a tool
    return outcome.message


@pytest.mark.gvisor_default
@pytest.mark.asyncio
async def test_garbage_bytes_are_a_protocol_error(hostile: Hostile) -> None:
    code = "_, out = control_fds()\nos.write(out, b'\\x00\\x00\\x00\\x05hello')\n" + SLEEP
    await _protocol(hostile, code)


@pytest.mark.asyncio
@pytest.mark.parametrize("head", ["b''", "b'\\x00\\x10\\x00\\x00'"], ids=["random-length", "length-under-the-cap"])
async def test_random_noise_is_a_protocol_error(hostile: Hostile, head: str) -> None:
    # Noise keeps coming: 4,096 random bytes once could open with a length prefix under the frame cap
    # (1 time in ~256), and a frame announced but never finished is a timeout, rightly, not a protocol error.
    code = f"_, out = control_fds()\nos.write(out, {head})\nwhile True:\n    os.write(out, os.urandom(4096))\n"
    await _protocol(hostile, code)


@pytest.mark.asyncio
async def test_an_oversized_frame_is_refused_before_it_is_read(hostile: Hostile) -> None:
    code = (
        "import struct\n_, out = control_fds()\nos.write(out, struct.pack('>I', 0xFFFFFFF0) + b'{' * 65536)\n" + SLEEP
    )
    await _protocol(hostile, code)


@pytest.mark.asyncio
async def test_a_frame_that_is_json_but_not_an_object_is_refused(hostile: Hostile) -> None:
    code = "import struct\n_, out = control_fds()\nbody = b'[1, 2, 3]'\n"
    code += "os.write(out, struct.pack('>I', len(body)) + body)\n"
    await _protocol(hostile, code + SLEEP)


@pytest.mark.asyncio
@pytest.mark.parametrize(
    "message",
    [
        pytest.param({"type": "call", "id": 1, "tool": "run_code", "args": {"code": "x"}}, id="call-outside-namespace"),
        pytest.param({"type": "call", "id": 1, "tool": "__class__", "args": {}}, id="call-dunder-tool"),
        pytest.param({"type": "call", "id": 99, "tool": "read_file", "args": {"path": "x"}}, id="call-id-out-of-order"),
        pytest.param({"type": "call", "id": 1, "tool": "read_file", "args": ["x"]}, id="call-args-not-object"),
        pytest.param({"type": "ready", "version": 1, "pid": 1}, id="ready-twice"),
        pytest.param({"type": "boot", "code": "return 1"}, id="boot-from-the-child"),
        pytest.param({"type": "log", "entries": [["secret-stream", "x"]]}, id="log-unknown-stream"),
        pytest.param({"type": "discover", "id": 1, "method": "exec", "args": {}}, id="discover-unknown-method"),
        pytest.param(
            {"type": "done", "ok": False, "error": {"kind": "sandbox-unavailable", "message": "forged"}},
            id="done-host-kind-sandbox-unavailable",
        ),
        pytest.param({"type": "done", "ok": False, "error": {"kind": "timeout"}}, id="done-host-kind-timeout"),
    ],
)
async def test_forged_frames_are_protocol_errors(hostile: Hostile, message: dict[str, object]) -> None:
    code = f"_, out = control_fds()\nos.write(out, frame({message!r}))\n" + SLEEP
    await _protocol(hostile, code)


@pytest.mark.asyncio
async def test_a_flood_of_forged_calls_beyond_the_pending_limit_is_refused(hostile: Hostile) -> None:
    code = (
        "_, out = control_fds()\n"
        "for call_id in range(1, 200):\n"
        "    os.write(out, frame({'type': 'call', 'id': call_id, 'tool': 'nap', 'args': {'seconds': 0.2}}))\n" + SLEEP
    )
    outcome = (await hostile.run(code, timeout=20)).failed("protocol")
    assert "128" in outcome.message, outcome.describe()


@pytest.mark.asyncio
async def test_a_forged_done_settles_the_run_and_leaves_nothing_behind(hostile: Hostile) -> None:
    code = (
        """
import subprocess
subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)', MARKER], start_new_session=True)
_, out = control_fds()
os.write(out, frame({'type': 'done', 'ok': True, 'value': 'forged'}))
"""
        + SLEEP
    )
    outcome = await hostile.run(code, timeout=20)
    assert outcome.ok() == "forged"
    assert outcome.elapsed < 15, outcome.describe()  # settled on the frame, not on the timeout


@pytest.mark.asyncio
async def test_replies_the_program_never_reads_do_not_pile_up_in_the_host(hostile: Hostile) -> None:
    # Issue 8 item 6, scaled down: 100 forged read_file calls on a 4 MB file, replies never read. With
    # max_message_bytes = 8 MiB the runtime may hold about 8 MiB of replies, not 400 MB; the reference host
    # itself holds the results of up to 8 admitted bodies (4 MB each, as lines, JSON and log copies), so the
    # bound is 256 MiB (before the fix the host grew by about 770 MiB).
    line = "y" * 9_999
    (hostile.workspace / "big.txt").write_text((line + "\n") * 400)
    code = (
        "_, out = control_fds()\n"
        "for call_id in range(1, 101):\n"
        "    os.write(out, frame({'type': 'call', 'id': call_id, 'tool': 'read_file', 'args': {'path': 'big.txt'}}))\n"
        + SLEEP
    )
    outcome = await hostile.run(code, timeout=20, max_message_bytes=8 * MIB, memory_bound=256 * MIB)
    outcome.failed("protocol")


@pytest.mark.asyncio
async def test_raw_bytes_on_stdout_and_stderr_are_only_output(hostile: Hostile) -> None:
    code = """
os.write(1, b'\\xff\\xfe\\x00\\x1b[2J\\x00\\x00\\x00\\x10{"type":"done"}')
os.write(2, bytes(range(256)))
return 'survived'
"""
    outcome = await hostile.run(code)
    assert outcome.ok() == "survived"
    assert {entry["stream"] for entry in outcome.logs} == {"fd1", "fd2"}


@pytest.mark.asyncio
async def test_closing_the_control_channel_is_a_worker_exit(hostile: Hostile) -> None:
    code = "source, sink = control_fds()\nos.close(source)\nos.close(sink)\n" + SLEEP
    (await hostile.run(code, timeout=20, grace_s=1.0)).failed("worker-exit")
