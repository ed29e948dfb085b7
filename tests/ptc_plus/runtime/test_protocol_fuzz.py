"""Random frames from a crafted child: the host always ends the run with an outcome, never crashes or hangs."""

from __future__ import annotations

import asyncio
import json
import struct
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ptc_plus.runtime.lane import NestedLane
from ptc_plus.runtime.outcome import OutcomeKind, RunOutcome
from ptc_plus.runtime.protocol import DISCOVERY_METHODS
from ptc_plus.runtime.run import ProgramRun, RunRequest
from ptc_plus.runtime.run_limits import ResolvedTimeout

from .conftest import FakeServices, outer_context, tool
from .test_protocol_misuse import CraftedLauncher

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=12,
)
ids = st.integers(-3, 8) | st.integers(-(2**64), 2**64) | st.text(max_size=3) | st.none()
messages = st.fixed_dictionaries(
    {"type": st.sampled_from(["call", "discover", "log", "done", "ready", "reply", "boot", "exec"])},
    optional={
        "id": ids,
        "tool": st.sampled_from(["echo", "run_code", "nope", ""]) | json_values,
        "args": json_values,
        "method": st.sampled_from([*DISCOVERY_METHODS, "exec"]) | json_values,
        "entries": st.lists(
            st.lists(st.sampled_from(["stdout", "stderr", "log", "secret"]) | json_values, max_size=3), max_size=3
        )
        | json_values,
        "ok": json_values,
        "value": json_values,
        "error": st.fixed_dictionaries({"kind": st.sampled_from([k.value for k in OutcomeKind])}) | json_values,
        "pid": ids,
    },
)


def _framed(body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + body


frames = st.one_of(
    messages.map(lambda message: _framed(json.dumps(message).encode())),
    st.binary(max_size=64).map(_framed),
    st.tuples(st.integers(0, 2**32 - 1), st.binary(max_size=32)).map(lambda pair: struct.pack(">I", pair[0]) + pair[1]),
    st.binary(max_size=16),
)


async def _run(workspace: Path, blob: Path) -> RunOutcome:
    async def echo(arguments: Any, context: Any) -> Any:
        return arguments

    services = FakeServices(workspace, [tool("echo", echo)])
    lane = NestedLane(services, outer_context(services).call)
    request = RunRequest(code="", workspace=workspace, tool_names=("echo",), timeout=ResolvedTimeout(seconds=60))
    launcher = CraftedLauncher(f"fuzz:{blob}", grace_s=2.0, max_message_bytes=4096, max_pending_calls=4)
    try:
        return await ProgramRun(request, launcher, lane).execute()
    finally:
        await lane.drain()
        await launcher.aclose()


@pytest.mark.slow
@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
@given(sequence=st.lists(frames, max_size=12))
def test_random_frames_always_end_with_an_outcome(workspace: Path, sequence: list[bytes]) -> None:
    blob = workspace / "frames.bin"
    blob.write_bytes(b"".join(sequence))
    outcome = asyncio.run(_run(workspace, blob))
    assert isinstance(outcome, RunOutcome)
    if outcome.failure is not None:
        # The child always leaves: ending by the wall-clock timeout would mean the host hung.
        assert outcome.failure.kind is not OutcomeKind.TIMEOUT, outcome.to_json()
        assert outcome.failure.kind in set(OutcomeKind)
    outcome.to_json()
