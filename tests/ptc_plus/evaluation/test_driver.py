"""The scripted model: observations from the tool results it was sent, the insertions each style makes."""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import orjson
import pytest

from hookspecs.reference.model import AssistantTurn, ModelRequest
from hookspecs.reference.openai_client import RequestUsage
from hookspecs.types import ToolSpec
from ptc_plus.evaluation.driver import (
    ExchangeLog,
    RecordingModel,
    ScriptDriver,
    SessionIds,
    contract_shown,
    discovery_program,
    observe,
)
from ptc_plus.evaluation.errors import (
    QueryMissing,
    ScriptEndedWithoutAnswer,
    ScriptFailed,
    StepAfterAnswer,
    ToolResultMissing,
)
from ptc_plus.evaluation.exchange import ProviderUsage
from ptc_plus.evaluation.task import Action, Answer, Call, Observation, Program, Style

Gen = Generator[Action, Observation, None]


def request(*messages: dict[str, Any], tools: tuple[str, ...] = (), system: str = "sys") -> ModelRequest:
    return ModelRequest(system=system, messages=messages, tools=tuple(ToolSpec(name=n, description=n) for n in tools))


def result(call_id: str, content: object) -> dict[str, Any]:
    text = content if isinstance(content, str) else orjson.dumps(content).decode()
    return {"role": "tool", "tool_call_id": call_id, "content": text}


def test_observe_reads_values_errors_and_program_envelopes() -> None:
    assert observe('{"total": 5}', program=False) == Observation(ok=True, value={"total": 5})
    failed = '{"error":"no-order","message":"no order 9"}'
    assert observe(failed, program=False) == Observation(ok=False, error=failed)
    envelope = '{"calls":1,"logs":[],"notes":[],"value":[1,2]}'
    assert observe(envelope, program=True) == Observation(ok=True, value=[1, 2])
    assert observe(failed, program=True) == Observation(ok=False, error=failed)
    preview = "[preview] first lines ... spill-0123"
    assert observe(preview, program=True) == Observation(ok=False, error=preview)


def test_contract_shown_only_for_a_stub_in_system_text() -> None:
    stub = 'async def weather_forecast(*, city: str) -> Any:\n    """Forecast."""'
    assert contract_shown(request(system=stub), "weather_forecast")
    assert contract_shown(request({"role": "system", "content": stub}), "weather_forecast")
    # A name in the on-demand list, a prefix of another stub or a stub in a tool result is not a contract shown.
    listed = request(
        {"role": "system", "content": "# - weather_forecast: Forecast.\nasync def weather_forecast_v2(*) -> Any:"},
        result("c-1", stub),
    )
    assert not contract_shown(listed, "weather_forecast")


def native_script() -> Gen:
    seen = yield Call(tool="lookup_order", arguments={"order_id": 2})
    yield Answer(text=f"total {seen.value['total']}" if seen.ok and isinstance(seen.value, dict) else seen.error)


def driver(script: Any, style: Style, log: ExchangeLog | None = None, **queries: str) -> ScriptDriver:
    return ScriptDriver(
        task_id="t", script=script, style=style, queries=queries, log=log or ExchangeLog(), ids=SessionIds("s-1")
    )


@pytest.mark.asyncio
async def test_native_runs_the_script_and_logs_every_exchange() -> None:
    log = ExchangeLog()
    model = driver(native_script, Style.NATIVE, log)
    first = await model.complete(request(tools=("lookup_order",)))
    (call,) = first.tool_calls
    assert (call.tool, call.arguments, call.call_id) == ("lookup_order", {"order_id": 2}, "call-1")
    calls = {"role": "assistant", "content": "", "tool_calls": [{"id": "call-1"}]}
    second = await model.complete(request(calls, result("call-1", {"total": 5.5})))
    assert second == AssistantTurn(text="total 5.5")
    assert [(e.session_id, e.answer) for e in log.exchanges] == [("s-1", first), ("s-1", second)]
    with pytest.raises(StepAfterAnswer):
        await model.complete(request())


@pytest.mark.asyncio
async def test_tool_search_is_inserted_once_before_an_unloaded_tool() -> None:
    model = driver(native_script, Style.TOOL_SEARCH, lookup_order="look up an order")
    first = await model.complete(request(tools=("tool_search",)))
    assert [(c.tool, c.arguments) for c in first.tool_calls] == [("tool_search", {"query": "look up an order"})]
    # The search's result is not the script's: the script still waits to make its call.
    second = await model.complete(request(result("call-1", {"loaded": []}), tools=("tool_search", "lookup_order")))
    assert [(c.tool, c.call_id) for c in second.tool_calls] == [("lookup_order", "call-2")]
    third = await model.complete(request(result("call-2", {"error": "x", "message": "refused"})))
    assert third.text == '{"error": "x", "message": "refused"}'.replace(" ", "")


@pytest.mark.asyncio
async def test_tool_search_not_inserted_for_a_loaded_tool_nor_twice() -> None:
    loaded = driver(native_script, Style.TOOL_SEARCH)
    turn = await loaded.complete(request(tools=("tool_search", "lookup_order")))
    assert turn.tool_calls[0].tool == "lookup_order"
    # Searched once and still not loaded: the call is made anyway (the host refuses it, the script reads that).
    model = driver(native_script, Style.TOOL_SEARCH, lookup_order="orders")
    await model.complete(request(tools=("tool_search",)))
    again = await model.complete(request(result("call-1", {"loaded": []}), tools=("tool_search",)))
    assert again.tool_calls[0].tool == "lookup_order"


def code_script() -> Gen:
    seen = yield Program(code="return 1", description="one", uses=("lookup_order", "add_note"))
    yield Answer(text=str(seen.value))


@pytest.mark.asyncio
async def test_one_discovery_program_searches_every_tool_not_shown() -> None:
    model = driver(code_script, Style.PTC_PLUS_COLD, lookup_order="order by id", add_note="add a note")
    first = await model.complete(request())
    assert first.tool_calls[0].arguments["code"] == (
        "return [await capabilities.search('order by id'), await capabilities.search('add a note')]"
    )
    envelope = {"calls": 0, "logs": [], "notes": [], "value": []}
    second = await model.complete(request(result("call-1", envelope)))
    assert second.tool_calls[0].arguments["code"] == "return 1"


@pytest.mark.asyncio
async def test_discovery_program_only_for_tools_not_shown() -> None:
    shown = "async def add_note(*, text: str) -> Any:"
    model = driver(code_script, Style.PTC_PLUS_COLD, lookup_order="order by id", add_note="add a note")
    first = await model.complete(request({"role": "system", "content": shown}))
    assert first.tool_calls[0].tool == "run_code"
    assert first.tool_calls[0].arguments["code"] == discovery_program("order by id")
    assert discovery_program("order by id") == "return await capabilities.search('order by id')"
    envelope = {"calls": 0, "logs": [], "notes": [], "value": {"text": "..."}}
    second = await model.complete(request({"role": "system", "content": shown}, result("call-1", envelope)))
    assert second.tool_calls[0].arguments == {"code": "return 1", "description": "one"}
    third = await model.complete(request(result("call-2", envelope | {"value": 1})))
    assert third.text == "1"


@pytest.mark.asyncio
async def test_nothing_inserted_when_every_contract_is_in_the_system_prompt() -> None:
    system = "async def lookup_order(*, order_id: int) -> Any:\nasync def add_note(*, text: str) -> Any:"
    model = driver(code_script, Style.PTC)
    turn = await model.complete(request(system=system))
    assert turn.tool_calls[0].arguments["code"] == "return 1"


@pytest.mark.asyncio
async def test_script_errors_are_typed() -> None:
    with pytest.raises(QueryMissing):
        await driver(code_script, Style.PTC_PLUS_COLD).complete(request())

    def silent() -> Gen:
        yield Call(tool="lookup_order")

    model = driver(silent, Style.NATIVE)
    await model.complete(request())
    with pytest.raises(ScriptEndedWithoutAnswer):
        await model.complete(request(result("call-1", {})))
    model = driver(silent, Style.NATIVE)
    await model.complete(request())
    with pytest.raises(ToolResultMissing):
        await model.complete(request(result("call-9", {})))

    def strict() -> Gen:
        seen = yield Call(tool="lookup_order")
        assert seen.ok, "expected success"
        yield Answer(text="")

    model = driver(strict, Style.NATIVE)
    await model.complete(request())
    with pytest.raises(ScriptFailed, match="expected success"):
        await model.complete(request(result("call-1", {"error": "e", "message": "m"})))


class UsageModel:
    route = "fake"

    def __init__(self, usage: list[RequestUsage] | None) -> None:
        self.reported = usage
        if usage is not None:
            self.usage: list[RequestUsage] = []

    async def complete(self, request: ModelRequest) -> AssistantTurn:
        if self.reported:
            self.usage.append(self.reported.pop(0))
        return AssistantTurn(text="ok")


@pytest.mark.asyncio
async def test_recording_model_keeps_provider_usage_and_unknowns() -> None:
    log = ExchangeLog()
    known = RequestUsage(cached_input=30, uncached_input=70, output=5)
    partial = RequestUsage(cached_input=None, uncached_input=None, output=7)
    prompt_only = RequestUsage.from_wire({"prompt_tokens": 40, "completion_tokens": 2})
    model = RecordingModel(UsageModel([known, partial, prompt_only]), log=log, ids=SessionIds("s-2", "s-1"))
    await model.complete(request())
    await model.complete(request())
    await model.complete(request())
    await RecordingModel(UsageModel(None), log=log).complete(request())
    assert [e.usage for e in log.exchanges] == [
        ProviderUsage(input=100, cached_input=30, output=5),
        ProviderUsage(input=None, cached_input=None, output=7),
        ProviderUsage(input=40, cached_input=None, output=2),
        None,
    ]
    assert (log.exchanges[0].session_id, log.exchanges[0].parent_session_id) == ("s-2", "s-1")
