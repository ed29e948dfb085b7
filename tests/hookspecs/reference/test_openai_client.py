"""The OpenAI-compatible chat client against a fake HTTP server on loopback."""

from __future__ import annotations

import socket
import threading
import urllib.error
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import orjson
import pytest

from hookspecs import ToolSpec
from hookspecs.reference import AssistantTurn, HostError, ModelRequest, ReferenceHost, RequestedCall
from hookspecs.reference.demo_tools import demo_tool_definitions
from hookspecs.reference.openai_client import OpenAIChatModel


class FakeEndpoint:
    """A loopback chat-completions server answering from a queue of ``(status, body)``."""

    def __init__(self) -> None:
        self.answers: list[tuple[int, bytes]] = []
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                endpoint.requests.append({"path": self.path, "json": orjson.loads(body)})
                endpoint.headers.append(dict(self.headers))
                status, payload = endpoint.answers.pop(0)
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)

    def answer(self, status: int = 200, body: Any = None, raw: bytes | None = None) -> None:
        self.answers.append((status, raw if raw is not None else orjson.dumps(body)))


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
    assert endpoint.headers[0]["Authorization"] == "Bearer sk-test"
    assert endpoint.headers[0]["Content-Type"] == "application/json"
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
    model = OpenAIChatModel(base_url=endpoint.url, model="m")
    turn = await model.complete(ModelRequest(system="S", messages=(), tools=()))
    assert turn == AssistantTurn(
        text="",
        tool_calls=(
            RequestedCall(call_id="c9", tool="echo", arguments={"t": "x"}),
            RequestedCall(call_id="", tool="bare", arguments={}),
        ),
    )
    assert "Authorization" not in endpoint.headers[0]


@pytest.mark.asyncio
async def test_http_error_is_host_0310(endpoint: FakeEndpoint) -> None:
    endpoint.answer(500, {"error": {"message": "overloaded"}})
    model = OpenAIChatModel(base_url=endpoint.url, model="m")
    with pytest.raises(HostError) as excinfo:
        await model.complete(ModelRequest(system="S", messages=(), tools=()))
    assert excinfo.value.code == "HOST-0310"
    assert excinfo.value.params["reason"] == "HTTP 500"
    assert excinfo.value.params["url"] == endpoint.url + "/chat/completions"
    # The error response was closed (left to the GC it leaks its socket: a ResourceWarning).
    cause = excinfo.value.__cause__
    assert isinstance(cause, urllib.error.HTTPError) and cause.fp.closed


@pytest.mark.asyncio
async def test_unreachable_endpoint_is_host_0310() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    model = OpenAIChatModel(base_url=f"http://127.0.0.1:{port}/v1", model="m", timeout_s=5)
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
    model = OpenAIChatModel(base_url=endpoint.url, model="m")
    with pytest.raises(HostError) as excinfo:
        await model.complete(ModelRequest(system="S", messages=(), tools=()))
    assert excinfo.value.code == "HOST-0311"


@pytest.mark.asyncio
async def test_model_failure_surfaces_from_run_turn(
    make_reference_host: Callable[..., ReferenceHost], endpoint: FakeEndpoint
) -> None:
    endpoint.answer(503, {})
    async with make_reference_host() as host:
        session = await host.start_session(model=OpenAIChatModel(base_url=endpoint.url, model="m"))
        with pytest.raises(HostError) as excinfo:
            await session.run_turn("hi")
        assert excinfo.value.code == "HOST-0310"
        # A failed turn still ends the agent's work: its family settles (ADR 0065).
        assert [e.type for e in session.log.events] == ["session-started", "user-message", "family-settled"]
