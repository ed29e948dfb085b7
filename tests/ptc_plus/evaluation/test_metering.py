"""Metering against a hand-counted transcript: parts, prefix caching per session, families, unknown usage.

Every expected number is the sum of the o200k counts of explicit strings written
out below (the canonical JSON a part serializes to), so a reader can recount it.
"""

from __future__ import annotations

from typing import Any

import attrs
import pytest

from hookspecs.reference.model import AssistantTurn, ModelRequest, RequestedCall
from hookspecs.types import ToolSpec
from ptc_plus.evaluation.exchange import Exchange, ProviderUsage
from ptc_plus.evaluation.metering import (
    UNIT,
    Meter,
    RequestMeter,
    Totals,
    family_roots,
    message_part,
    meter_provider,
    spec_part,
    total,
)


@pytest.fixture(scope="module")
def meter() -> Meter:
    return Meter()


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

    # r1: a session's first request: nothing cached. Output: the call as canonical JSON.
    assert r1 == RequestMeter(
        session_id="r",
        input=system + add + user,
        input_cached=0,
        input_uncached=system + add + user,
        output=n(meter, ANSWER_CALL_JSON),
    )
    # c1: the child's first request, identical in content to r1's, is still all uncached (another session).
    assert c1 == RequestMeter(
        session_id="c", input=system + add + user, input_cached=0, input_uncached=system + add + user, output=three
    )
    # r2: r1's parts are its prefix; the two new messages are not.
    assert r2 == RequestMeter(
        session_id="r",
        input=system + add + user + call + result,
        input_cached=system + add + user,
        input_uncached=call + result,
        output=three,
    )
    # r3: `mul` is inserted after `add`: the prefix ends there, the history after it is sent again uncached.
    assert r3 == RequestMeter(
        session_id="r",
        input=system + add + mul + user + call + result,
        input_cached=system + add,
        input_uncached=mul + user + call + result,
        output=three,
    )

    cached = 0 + 0 + (system + add + user) + (system + add)
    uncached = (system + add + user) * 2 + (call + result) + (mul + user + call + result)
    output = n(meter, ANSWER_CALL_JSON) + three * 3
    assert run.total == Totals(
        requests=4, input=cached + uncached, input_cached=cached, input_uncached=uncached, output=output
    )
    assert run.total.total == cached + uncached + output
    # One family: the child's request counts in its root's total.
    assert run.families == {"r": run.total}
    assert run.first_request_input == system + add + user


def test_sessions_are_cached_independently_and_families_split(meter: Meter) -> None:
    exchanges = transcript()
    other = attrs.evolve(exchanges[0], session_id="other")
    run = meter.meter([*exchanges, other])
    assert run.requests[-1].input_cached == 0  # same content as r1, but a different session
    assert set(run.families) == {"r", "other"}
    assert run.families["r"].requests == 4
    assert run.families["other"].requests == 1


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
    assert run.total == Totals(requests=2, input=None, input_cached=None, input_uncached=None, output=None)
    assert run.total.total is None
    assert run.first_request_input == 50

    partial = meter_provider(
        [
            Exchange(session_id="r", parent_session_id=None, request=request, answer=AssistantTurn(), usage=u)
            for u in (known, no_cache_field)
        ]
    )
    # Input and output are known for every request, the cached split is not: never filled in as zero.
    assert partial.total == Totals(requests=2, input=90, input_cached=None, input_uncached=None, output=12)
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
