"""Metering against a hand-counted transcript: parts, the run's prefix cache, families, unknown usage.

Every expected number is the sum of the o200k counts of explicit strings written
out below (the canonical JSON a part serializes to), so a reader can recount it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs
import pytest

from hookspecs.reference.model import AssistantTurn, ModelRequest, RequestedCall
from hookspecs.types import ToolSpec
from ptc_plus.evaluation.exchange import Exchange, ProviderUsage
from ptc_plus.evaluation.host_prompt import host_prompt
from ptc_plus.evaluation.metering import (
    MIN_CACHEABLE_PREFIX,
    STAND_IN_ROOT,
    UNIT,
    Meter,
    RequestMeter,
    Totals,
    family_roots,
    message_part,
    meter_provider,
    o200k_counter,
    spec_part,
    total,
)


@pytest.fixture(scope="module")
def meter() -> Meter:
    """No minimum prefix: the hand-counted transcript's prompts are a few dozen tokens."""
    return Meter(min_prefix=0)


def n(meter: Meter, text: str) -> int:
    """The o200k count of one explicit string (a fresh count, not the memo under test)."""
    return meter._counter.count(text)


SYSTEM = "You are terse."
ADD = ToolSpec(name="add", description="Add two numbers", input_schema={"type": "object"})
ADD_JSON = '{"description":"Add two numbers","input_schema":{"type":"object"},"name":"add"}'
MUL = ToolSpec(name="mul", description="Multiply", input_schema={"type": "object"})
MUL_JSON = '{"description":"Multiply","input_schema":{"type":"object"},"name":"mul"}'
USER: dict[str, Any] = {"role": "user", "content": "1+2?"}
USER_JSON = '{"content":"1+2?","role":"user"}'
CALL: dict[str, Any] = {
    "role": "assistant",
    "content": "",
    "tool_calls": [{"id": "c1", "name": "add", "arguments": {"a": 1, "b": 2}}],
}
CALL_JSON = '{"content":"","role":"assistant","tool_calls":[{"arguments":{"a":1,"b":2},"id":"c1","name":"add"}]}'
RESULT: dict[str, Any] = {"role": "tool", "tool_call_id": "c1", "content": "3"}
RESULT_JSON = '{"content":"3","role":"tool","tool_call_id":"c1"}'
ANSWER_CALL_JSON = '{"arguments":{"a":1,"b":2},"name":"add"}'


def transcript() -> list[Exchange]:
    """Root session r: a call, then the answer, then (new turn) a schema loaded mid-list; child c of r."""
    first = ModelRequest(system=SYSTEM, messages=(USER,), tools=(ADD,))
    second = ModelRequest(system=SYSTEM, messages=(USER, CALL, RESULT), tools=(ADD,))
    # A tool schema inserted before the history: everything after the system and `add` is uncached again.
    third = ModelRequest(system=SYSTEM, messages=(USER, CALL, RESULT), tools=(ADD, MUL))
    child = ModelRequest(system=SYSTEM, messages=(USER,), tools=(ADD,))
    call = AssistantTurn(tool_calls=(RequestedCall(tool="add", arguments={"a": 1, "b": 2}, call_id="c1"),))
    return [
        Exchange(session_id="r", parent_session_id=None, request=first, answer=call),
        Exchange(session_id="c", parent_session_id="r", request=child, answer=AssistantTurn(text="3")),
        Exchange(session_id="r", parent_session_id=None, request=second, answer=AssistantTurn(text="3")),
        Exchange(session_id="r", parent_session_id=None, request=third, answer=AssistantTurn(text="3")),
    ]


def test_parts_are_the_canonical_json_written_above(meter: Meter) -> None:
    assert spec_part(ADD) == ADD_JSON.encode()
    assert message_part(CALL) == CALL_JSON.encode()
    request = ModelRequest(system=SYSTEM, messages=(USER, CALL, RESULT), tools=(ADD, MUL))
    assert meter.parts(request) == [s.encode() for s in (SYSTEM, ADD_JSON, MUL_JSON, USER_JSON, CALL_JSON, RESULT_JSON)]


def test_the_encoder_is_o200k(meter: Meter) -> None:
    # Pinned counts: another tokenizer (cl100k, a word split) would give other numbers.
    assert n(meter, SYSTEM) == 4  # "You", " are", " terse", "."
    assert n(meter, USER_JSON) == 12
    assert UNIT == "o200k tokens (counted per request part)"


def test_hand_counted_transcript(meter: Meter) -> None:
    system, add, mul = n(meter, SYSTEM), n(meter, ADD_JSON), n(meter, MUL_JSON)
    user, call, result = n(meter, USER_JSON), n(meter, CALL_JSON), n(meter, RESULT_JSON)
    three = n(meter, "3")

    run = meter.meter(transcript())
    r1, c1, r2, r3 = run.requests

    # r1: the run's first request: nothing cached, all of it written. Output: the call as canonical JSON.
    assert r1 == RequestMeter(
        session_id="r",
        input=system + add + user,
        input_cached=0,
        input_uncached=system + add + user,
        output=n(meter, ANSWER_CALL_JSON),
        input_written=system + add + user,
    )
    # c1: the child's first request, identical in content to r1's: the run's cache serves it (ADR 0096).
    assert c1 == RequestMeter(
        session_id="c",
        input=system + add + user,
        input_cached=system + add + user,
        input_uncached=0,
        output=three,
        input_written=0,
    )
    # r2: r1's parts are its prefix; the two new messages are not.
    assert r2 == RequestMeter(
        session_id="r",
        input=system + add + user + call + result,
        input_cached=system + add + user,
        input_uncached=call + result,
        output=three,
        input_written=call + result,
    )
    # r3: `mul` is inserted after `add`: the prefix ends there, the history after it is sent again uncached.
    assert r3 == RequestMeter(
        session_id="r",
        input=system + add + mul + user + call + result,
        input_cached=system + add,
        input_uncached=mul + user + call + result,
        output=three,
        input_written=mul + user + call + result,
    )

    cached = 0 + (system + add + user) * 2 + (system + add)
    uncached = (system + add + user) + (call + result) + (mul + user + call + result)
    output = n(meter, ANSWER_CALL_JSON) + three * 3
    assert run.total == Totals(
        requests=4,
        input=cached + uncached,
        input_cached=cached,
        input_uncached=uncached,
        output=output,
        input_written=uncached,
    )
    assert run.total.total == cached + uncached + output
    # One family: the child's request counts in its root's total.
    assert run.families == {"r": run.total}
    assert run.first_request_input == system + add + user


def test_the_cache_is_the_runs_across_sessions_and_families_split(meter: Meter) -> None:
    exchanges = transcript()
    other = attrs.evolve(exchanges[0], session_id="other")
    run = meter.meter([*exchanges, other])
    # Same content as r1 in a session of another family of the same run: served from the run's cache.
    assert run.requests[-1].input_cached == run.requests[0].input
    assert run.requests[-1].input_uncached == 0
    assert set(run.families) == {"r", "other"}
    assert run.families["r"].requests == 4
    assert run.families["other"].requests == 1
    # Another run starts cold: the cache is per run, never carried from one meter() call to the next.
    again = meter.meter([other])
    assert again.requests[0].input_cached == 0


def sized(tokens: int) -> str:
    """A real host prompt text of exactly ``tokens`` o200k tokens (asserted, so the boundary tests are exact)."""
    counter = o200k_counter()
    text = host_prompt(tokens, counter.count)
    assert counter.count(text) == tokens
    return text


def two_sessions(system: str, *, child: str = "c") -> list[Exchange]:
    """A parent's request and a child's: they share only the system text (different user messages).

    ``child="r"`` makes the second request the parent's own next one.
    """
    return [
        Exchange(
            session_id=session,
            parent_session_id=parent,
            request=ModelRequest(system=system, messages=({"role": "user", "content": text},), tools=()),
            answer=AssistantTurn(text="ok"),
        )
        for session, parent, text in (("r", None, "first"), (child, None if child == "r" else "r", "second"))
    ]


def test_a_shared_prefix_under_the_minimum_is_not_cached() -> None:
    assert MIN_CACHEABLE_PREFIX == 1024
    meter = Meter()
    short = meter.meter(two_sessions(sized(MIN_CACHEABLE_PREFIX - 1))).requests[1]
    assert short.input_cached == 0  # 1,023 shared tokens: a provider caches nothing
    assert short.input_uncached == short.input
    # Within one session too: 1,023 tokens shared with the previous request are not cached.
    assert meter.meter(two_sessions(sized(MIN_CACHEABLE_PREFIX - 1), child="r")).requests[1].input_cached == 0
    enough = meter.meter(two_sessions(sized(MIN_CACHEABLE_PREFIX))).requests[1]
    assert enough.input_cached == MIN_CACHEABLE_PREFIX  # exactly the shared system text, from the parent's request
    assert enough.input_uncached == n(meter, message_part({"role": "user", "content": "second"}).decode())


def test_a_request_under_the_minimum_writes_nothing_into_the_cache() -> None:
    meter = Meter()
    small = meter.meter(two_sessions("You are terse.")).requests[0]
    assert small.input_written == 0 and small.input_uncached == small.input
    large = meter.meter(two_sessions(sized(2000))).requests[0]
    assert large.input_written == large.input_uncached == large.input


def test_the_host_prompt_is_the_first_part_of_every_request_and_is_cached_across_sessions() -> None:
    prompt = sized(3000)
    meter = Meter(host_prompt=prompt)
    exchanges = transcript()
    for exchange in exchanges:
        parts = meter.parts(exchange.request)
        assert parts[0] == prompt.encode()
        assert parts[1] == exchange.request.system.encode()
    run = meter.meter(exchanges)
    assert run.requests[0].input_cached == 0
    # The child's first request: the host prompt, system and `add` its parent sent are cached.
    assert run.requests[1].input_cached == 3000 + n(meter, SYSTEM) + n(meter, ADD_JSON) + n(meter, USER_JSON)
    # No host prompt: no part at all (not an empty one).
    assert Meter().parts(exchanges[0].request)[0] == SYSTEM.encode()


def test_the_run_directory_is_metered_as_one_fixed_path(tmp_path: Path) -> None:
    def request(root: Path) -> Exchange:
        system = f"You are an agent working in the workspace {root}/run/workspace."
        result = {"role": "tool", "tool_call_id": "c1", "content": f"wrote {root}/run/workspace/out.txt"}
        return Exchange(
            session_id="r",
            parent_session_id=None,
            request=ModelRequest(system=system, messages=(USER, result), tools=()),
            answer=AssistantTurn(text=f"See {root}/run/workspace/out.txt."),
        )

    short, long = tmp_path / "t", tmp_path / "a-much-longer-temporary-directory" / "ptc-plus-eval-4242"
    metered = [Meter(run_root=root).meter([request(root)]).requests[0] for root in (short, long)]
    assert metered[0] == metered[1]
    assert Meter(run_root=short).parts(request(short).request)[0] == (
        f"You are an agent working in the workspace {STAND_IN_ROOT}/run/workspace.".encode()
    )
    # Without the rewrite the two differ: the path's length is in the counts.
    raw = [Meter().meter([request(root)]).requests[0] for root in (short, long)]
    assert raw[0] != raw[1]


def test_a_child_whose_parent_made_no_request_belongs_to_that_parent() -> None:
    request = ModelRequest(system="s", messages=(), tools=())
    grandchild = Exchange(session_id="g", parent_session_id="c", request=request, answer=AssistantTurn())
    child = Exchange(session_id="c", parent_session_id="r", request=request, answer=AssistantTurn())
    assert family_roots([grandchild, child]) == {"g": "r", "c": "r"}
    assert family_roots([grandchild]) == {"g": "c"}


def test_each_distinct_part_is_encoded_once() -> None:
    """2,000 schemas × 50 requests: the encoder sees each schema once, not 100,000 times."""

    class Counting:
        unit = "words"

        def __init__(self) -> None:
            self.calls = 0

        def count(self, text: str) -> int:
            self.calls += 1
            return len(text.split())

    counting = Counting()
    meter = Meter(counting)
    tools = tuple(ToolSpec(name=f"t{i}", description=f"tool number {i}") for i in range(2000))
    history: list[dict[str, Any]] = []
    exchanges = []
    for step in range(50):
        history.append({"role": "user", "content": f"step {step}"})
        request = ModelRequest(system="sys", messages=tuple(history), tools=tools)
        exchanges.append(Exchange(session_id="r", parent_session_id=None, request=request, answer=AssistantTurn()))
    run = meter.meter(exchanges)
    assert counting.calls == 1 + 2000 + 50
    assert run.requests[-1].input_uncached == 2  # "step 49": only the newest message is new
    assert run.total.requests == 50


def test_provider_usage_unknown_stays_unknown() -> None:
    request = ModelRequest(system="s", messages=(), tools=())
    known = ProviderUsage(input=50, cached_input=20, output=7)
    no_cache_field = ProviderUsage(input=40, cached_input=None, output=5)  # a server without prompt_tokens_details
    exchanges = [
        Exchange(session_id="r", parent_session_id=None, request=request, answer=AssistantTurn(), usage=known),
        Exchange(session_id="c", parent_session_id="r", request=request, answer=AssistantTurn(), usage=None),
    ]
    run = meter_provider(exchanges)
    assert run.requests[0] == RequestMeter(session_id="r", input=50, input_cached=20, input_uncached=30, output=7)
    assert run.requests[1] == RequestMeter(
        session_id="c", input=None, input_cached=None, input_uncached=None, output=None
    )
    assert run.total == Totals(
        requests=2, input=None, input_cached=None, input_uncached=None, output=None, input_written=None
    )
    assert run.total.total is None
    assert run.first_request_input == 50

    partial = meter_provider(
        [
            Exchange(session_id="r", parent_session_id=None, request=request, answer=AssistantTurn(), usage=u)
            for u in (known, no_cache_field)
        ]
    )
    # Input and output are known for every request, the cached split is not: never filled in as zero.
    assert partial.total == Totals(
        requests=2, input=90, input_cached=None, input_uncached=None, output=12, input_written=None
    )
    assert partial.total.total == 102


def test_total_of_nothing_is_zero_not_unknown() -> None:
    assert total([]) == Totals(requests=0, input=0, input_cached=0, input_uncached=0, output=0)


def test_without_o200k_scripted_metering_refuses_rather_than_mislabel(monkeypatch: pytest.MonkeyPatch) -> None:
    from ptc_plus.evaluation import metering

    class Estimate:
        unit = "estimated tokens (4 ASCII characters or 1 other character each)"

        def count(self, text: str) -> int:
            return len(text) // 4

    monkeypatch.setattr(metering, "offline_counter", Estimate)
    with pytest.raises(metering.TokenizerUnavailable) as raised:
        Meter()
    assert raised.value.code == "PTC-7424"
