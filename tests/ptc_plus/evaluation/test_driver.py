"""What the evaluation's models share: observations from the tool results they were sent, contracts shown, usage."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from hookspecs.reference.model import AssistantTurn, ModelRequest
from hookspecs.reference.openai_client import RequestUsage
from hookspecs.types import ToolSpec
from ptc_plus.evaluation.driver import ExchangeLog, RecordingModel, SessionIds, contract_shown, observe
from ptc_plus.evaluation.exchange import ProviderUsage
from ptc_plus.evaluation.task import Observation


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
