"""The recording lane keeps what one cell's nested calls add to the journal bounded (ADR 0085)."""

from __future__ import annotations

from hookspecs import JSONObject, ResultStatus, ToolResult
from ptc_plus.runtime.kernel.lanes import RecordingLane
from ptc_plus.runtime.lane import ExpiringLane, ReplyHandler


class Echo:
    """A lane that settles each call at once with its argument ``v``."""

    def __init__(self) -> None:
        self.count = 0

    def submit(self, tool: str, arguments: JSONObject, on_settled: ReplyHandler) -> str:
        self.count += 1
        call_id = f"c:ptc:{self.count}"
        on_settled(ToolResult(call_id=call_id, tool=tool, status=ResultStatus.OK, value=arguments.get("v")))
        return call_id

    async def cancel(self, grace: float) -> tuple[tuple[str, str], ...]:
        return ()


def test_calls_within_the_limit_are_recorded() -> None:
    lane = RecordingLane(Echo(), limit=1000)
    settled: list[ToolResult] = []
    lane.submit("echo", {"v": "a" * 100}, settled.append)
    assert lane.overflow is None
    assert [call.value for call in lane.calls()] == ["a" * 100]


def test_past_the_limit_nothing_is_kept_and_the_calls_still_settle() -> None:
    lane = RecordingLane(Echo(), limit=1000)
    settled: list[ToolResult] = []
    for _ in range(4):
        lane.submit("echo", {"v": "b" * 300}, settled.append)
    assert len(settled) == 4  # the program gets every result: only the journal does not
    assert lane.overflow is not None and "1000 bytes" in lane.overflow
    assert lane.calls() == ()
    assert all(arguments == {} for _tool, arguments in lane._submitted.values())  # no copy held on the host


class Expiring(Echo):
    """A lane that remembers the deadline a normal end gave its drain."""

    def __init__(self) -> None:
        super().__init__()
        self.expired: list[tuple[float, float]] = []

    def expire(self, deadline: float, grace: float) -> None:
        self.expired.append((deadline, grace))


def test_a_cells_drain_is_bounded_by_the_inner_lanes_deadline() -> None:
    # A kernel cell's calls go through the recording lane: the run's deadline must still reach the host's lane.
    inner = Expiring()
    lane = RecordingLane(inner)
    assert isinstance(lane, ExpiringLane)
    lane.expire(12.5, 3.0)
    assert inner.expired == [(12.5, 3.0)]
    RecordingLane(Echo()).expire(1.0, 1.0)  # a lane that cannot expire is left to drain as it is
