"""The OpenAI-compatible chat client against a fake HTTP server on loopback."""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import orjson
import pytest

from hookspecs import ToolSpec
from hookspecs.reference import AssistantTurn, HostError, ModelRequest, ReferenceHost, RequestedCall
from hookspecs.reference.demo_tools import demo_tool_definitions
from hookspecs.reference.openai_client import OpenAIChatModel, RequestUsage


class FakeEndpoint:
    """A loopback chat-completions server answering from a queue of ``(status, body)``."""

    def __init__(self) -> None:
        self.answers: list[tuple[int, bytes, str]] = []
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                endpoint.requests.append({"path": self.path, "json": orjson.loads(body)})
                endpoint.headers.append({k.lower(): v for k, v in self.headers.items()})
                status, payload, content_type = endpoint.answers.pop(0)
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)

    def answer(self, status: int = 200, body: Any = None, raw: bytes | None = None) -> None:
        self.answers.append((status, raw if raw is not None else orjson.dumps(body), "application/json"))

    def stream(self, *chunks: dict[str, Any]) -> None:
        events = b"".join(b"data: " + orjson.dumps(c) + b"\n\n" for c in chunks) + b"data: [DONE]\n\n"
        self.answers.append((200, events, "text/event-stream"))


@pytest.fixture
def endpoint() -> Iterator[FakeEndpoint]:
    fake = FakeEndpoint()
    fake.thread.start()
    try:
        yield fake
    finally:
        fake.server.shutdown()
        fake.server.server_close()
        fake.thread.join()


def chat(content: str | None = None, tool_calls: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls is not None:
        message["tool_calls"] = tool_calls
    return {"id": "cmpl-1", "object": "chat.completion", "choices": [{"index": 0, "message": message}]}


def function_call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": orjson.dumps(arguments).decode()},
    }


def test_payload_shape() -> None:
    model = OpenAIChatModel(base_url="http://127.0.0.1:1/v1/", model="m")
    spec = ToolSpec(
        name="echo", description="Echo.", input_schema={"type": "object", "properties": {"t": {"type": "string"}}}
    )
    request = ModelRequest(
        system="SYSTEM",
        messages=(
            {"role": "user", "content": "hi"},
            {"role": "system", "content": "catalog"},
            {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "name": "echo", "arguments": {"t": "x"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": '{"t":"x"}'},
        ),
        tools=(spec,),
    )
    assert model.route == "openai:m"
    assert model.payload(request) == {
        "model": "m",
        "messages": [
            {"role": "system", "content": "SYSTEM"},
            {"role": "user", "content": "hi"},
            {"role": "system", "content": "catalog"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "echo", "arguments": '{"t":"x"}'}}
                ],
            },
            {"role": "tool", "content": '{"t":"x"}', "tool_call_id": "c1"},
        ],
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "echo",
                    "description": "Echo.",
                    "parameters": {"type": "object", "properties": {"t": {"type": "string"}}},
                },
            }
        ],
    }
    assert "tools" not in model.payload(ModelRequest(system="S", messages=(), tools=()))


@pytest.mark.asyncio
async def test_a_full_turn_with_a_tool_call_round_trip(
    make_reference_host: Callable[..., ReferenceHost], reference_workspace: Path, endpoint: FakeEndpoint
) -> None:
    endpoint.answer(
        body=chat(None, [function_call("call_1", "convert_units", {"value": 2, "from_unit": "km", "to_unit": "m"})])
    )
    endpoint.answer(body=chat("2 km is 2000 m."))
    model = OpenAIChatModel(base_url=endpoint.url, model="test-model", api_key="sk-test")
    async with make_reference_host(tools=demo_tool_definitions(reference_workspace)) as host:
        session = await host.start_session(model=model)
        summary = await session.run_turn("How many metres in 2 km?")
    assert summary.final_text == "2 km is 2000 m." and summary.tool_calls == 1
    assert session.info.model_route == "openai:test-model"
    assert [r["path"] for r in endpoint.requests] == ["/v1/chat/completions"] * 2
    assert endpoint.headers[0]["authorization"] == "Bearer sk-test"
    assert endpoint.headers[0]["content-type"] == "application/json"
    first, second = (r["json"] for r in endpoint.requests)
    assert first["model"] == "test-model"
    assert first["messages"][0]["role"] == "system" and first["messages"][0]["content"] == session.system_prompt()
    assert first["messages"][1:] == [{"role": "user", "content": "How many metres in 2 km?"}]
    assert {t["function"]["name"] for t in first["tools"]} >= {"convert_units", "read_file"}
    assert all(t["type"] == "function" for t in first["tools"])
    assistant, tool = second["messages"][2:]
    assert assistant["tool_calls"] == [
        function_call("call_1", "convert_units", {"value": 2, "from_unit": "km", "to_unit": "m"})
    ]
    assert tool == {"role": "tool", "tool_call_id": "call_1", "content": '{"unit":"m","value":2000.0}'}


@pytest.mark.asyncio
async def test_answer_parsing(endpoint: FakeEndpoint) -> None:
    endpoint.answer(body=chat(None, [function_call("c9", "echo", {"t": "x"}), {"function": {"name": "bare"}}]))
    model = OpenAIChatModel(base_url=endpoint.url, model="m", max_retries=0)
    turn = await model.complete(ModelRequest(system="S", messages=(), tools=()))
    assert turn == AssistantTurn(
        text="",
        tool_calls=(
            RequestedCall(call_id="c9", tool="echo", arguments={"t": "x"}),
            RequestedCall(call_id="", tool="bare", arguments={}),
        ),
    )
    assert "authorization" not in endpoint.headers[0]


@pytest.mark.asyncio
async def test_http_error_is_host_0310(endpoint: FakeEndpoint) -> None:
    endpoint.answer(500, {"error": {"message": "overloaded"}})
    model = OpenAIChatModel(base_url=endpoint.url, model="m", max_retries=0)
    with pytest.raises(HostError) as excinfo:
        await model.complete(ModelRequest(system="S", messages=(), tools=()))
    assert excinfo.value.code == "HOST-0310"
    # The server's own error text is shown, after the retries gave up.
    assert excinfo.value.params["reason"] == "HTTP 500: overloaded"
    assert excinfo.value.params["url"] == endpoint.url + "/chat/completions"


@pytest.mark.asyncio
async def test_unreachable_endpoint_is_host_0310() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    model = OpenAIChatModel(base_url=f"http://127.0.0.1:{port}/v1", model="m", timeout_s=5, max_retries=0)
    with pytest.raises(HostError) as excinfo:
        await model.complete(ModelRequest(system="S", messages=(), tools=()))
    assert excinfo.value.code == "HOST-0310"


@pytest.mark.asyncio
@pytest.mark.parametrize(
    "raw",
    [
        b"not json at all",
        b"{}",
        b'{"choices": []}',
        b'{"choices": [{"message": null}]}',
        orjson.dumps({"choices": [{"message": {"tool_calls": [{"function": {"name": "f", "arguments": "{bad"}}]}}]}),
    ],
    ids=["not-json", "no-choices", "empty-choices", "null-message", "bad-arguments"],
)
async def test_malformed_answer_is_host_0311(endpoint: FakeEndpoint, raw: bytes) -> None:
    endpoint.answer(raw=raw)
    model = OpenAIChatModel(base_url=endpoint.url, model="m", max_retries=0)
    with pytest.raises(HostError) as excinfo:
        await model.complete(ModelRequest(system="S", messages=(), tools=()))
    assert excinfo.value.code == "HOST-0311"


@pytest.mark.asyncio
async def test_model_failure_surfaces_from_run_turn(
    make_reference_host: Callable[..., ReferenceHost], endpoint: FakeEndpoint
) -> None:
    endpoint.answer(503, {})
    async with make_reference_host() as host:
        session = await host.start_session(model=OpenAIChatModel(base_url=endpoint.url, model="m", max_retries=0))
        with pytest.raises(HostError) as excinfo:
            await session.run_turn("hi")
        assert excinfo.value.code == "HOST-0310"
        # A failed turn still ends the agent's work: its family settles (ADR 0065).
        assert [e.type for e in session.log.events] == ["session-started", "user-message", "family-settled"]


def delta(content: str | None = None, tool_calls: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    piece: dict[str, Any] = {}
    if content is not None:
        piece["content"] = content
    if tool_calls is not None:
        piece["tool_calls"] = tool_calls
    choice = {"index": 0, "delta": piece, "finish_reason": None}
    return {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m", "choices": [choice]}


@pytest.mark.asyncio
async def test_a_stream_is_assembled_text_shown_as_it_arrives_and_usage_recorded(endpoint: FakeEndpoint) -> None:
    endpoint.stream(
        delta("Let me "),
        delta("check."),
        delta(tool_calls=[{"index": 0, "id": "c1", "type": "function", "function": {"name": "ec", "arguments": ""}}]),
        delta(tool_calls=[{"index": 0, "function": {"name": "ho", "arguments": '{"t": '}}]),
        delta(tool_calls=[{"index": 0, "function": {"arguments": '"x"}'}}]),
        delta(tool_calls=[{"index": 1, "id": "c2", "type": "function", "function": {"name": "b", "arguments": "{}"}}]),
        {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m", "choices": []}
        | {"usage": {"prompt_tokens": 100, "completion_tokens": 9, "prompt_tokens_details": {"cached_tokens": 64}}},
    )
    model = OpenAIChatModel(base_url=endpoint.url, model="m", stream=True, max_retries=0)
    shown: list[str] = []
    recorded: list[RequestUsage] = []
    model.on_text = shown.append
    model.on_usage = recorded.append
    turn = await model.complete(ModelRequest(system="S", messages=(), tools=()))
    assert shown == ["Let me ", "check."]
    assert turn == AssistantTurn(
        text="Let me check.",
        tool_calls=(
            RequestedCall(call_id="c1", tool="echo", arguments={"t": "x"}),
            RequestedCall(call_id="c2", tool="b", arguments={}),
        ),
    )
    assert endpoint.requests[0]["json"]["stream"] is True
    assert endpoint.requests[0]["json"]["stream_options"] == {"include_usage": True}
    assert recorded == model.usage == [RequestUsage(cached_input=64, uncached_input=36, output=9, input=100)]


@pytest.mark.parametrize(
    ("wire", "expected"),
    [
        (None, (None, None, None, None)),
        ({}, (None, None, None, None)),
        ({"prompt_tokens": 10, "completion_tokens": 0}, (None, None, 0, 10)),
        ({"prompt_tokens": 10, "prompt_tokens_details": {"cached_tokens": 0}}, (0, 10, None, 10)),
        ({"prompt_tokens_details": {"cached_tokens": 4}, "completion_tokens": 2}, (4, None, 2, None)),
        ({"prompt_tokens": "10", "completion_tokens": -1}, (None, None, None, None)),
    ],
)
def test_unknown_usage_stays_unknown(wire: Any, expected: tuple[int | None, ...]) -> None:
    usage = RequestUsage.from_wire(wire)
    assert (usage.cached_input, usage.uncached_input, usage.output, usage.input) == expected


@pytest.mark.asyncio
async def test_a_429_is_retried_and_a_500_shows_the_servers_text(endpoint: FakeEndpoint) -> None:
    endpoint.answer(429, {"error": {"message": "rate limited"}})
    endpoint.answer(body=chat("fine"))
    model = OpenAIChatModel(base_url=endpoint.url, model="m", max_retries=2)
    assert (await model.complete(ModelRequest(system="S", messages=(), tools=()))).text == "fine"
    assert [h.get("x-stainless-retry-count") for h in endpoint.headers] == ["0", "1"]
    endpoint.answer(500, raw=b"<html><body>upstream   exploded</body></html>")
    model = OpenAIChatModel(base_url=endpoint.url, model="m", max_retries=0)
    with pytest.raises(HostError) as excinfo:
        await model.complete(ModelRequest(system="S", messages=(), tools=()))
    assert excinfo.value.params["reason"] == "HTTP 500: <html><body>upstream exploded</body></html>"
