"""An OpenAI-compatible chat-completions model route (optional; standard library only).

It speaks ``POST {base_url}/chat/completions`` with function tools, so it
works with any server implementing that wire format. Requests run in a
worker thread so the host's event loop keeps scheduling tool calls.
"""

from __future__ import annotations

import asyncio
import urllib.error
import urllib.request
from typing import Any

import orjson

from hookspecs.reference.errors import HostError
from hookspecs.reference.model import AssistantTurn, ModelRequest, RequestedCall


class OpenAIChatModel:
    """A model route over an OpenAI-compatible endpoint.

    Transport failures and malformed answers raise :class:`HostError`
    ``HOST-0310`` (transport or HTTP status) or ``HOST-0311`` (bad payload).
    """

    def __init__(self, *, base_url: str, model: str, api_key: str | None = None, timeout_s: float = 120.0) -> None:
        self._url = base_url.rstrip("/") + "/chat/completions"
        self._model = model
        self._api_key = api_key
        self._timeout = timeout_s

    @property
    def route(self) -> str:
        return f"openai:{self._model}"

    def payload(self, request: ModelRequest) -> dict[str, Any]:
        messages: list[dict[str, Any]] = [{"role": "system", "content": request.system}]
        for message in request.messages:
            wire = {"role": message["role"], "content": message.get("content", "")}
            if message.get("tool_calls"):
                wire["tool_calls"] = [
                    {
                        "id": c["id"],
                        "type": "function",
                        "function": {"name": c["name"], "arguments": orjson.dumps(c["arguments"]).decode()},
                    }
                    for c in message["tool_calls"]
                ]
            if message.get("tool_call_id"):
                wire["tool_call_id"] = message["tool_call_id"]
            messages.append(wire)
        tools = [
            {
                "type": "function",
                "function": {"name": s.name, "description": s.description, "parameters": dict(s.input_schema)},
            }
            for s in request.tools
        ]
        body: dict[str, Any] = {"model": self._model, "messages": messages}
        if tools:
            body["tools"] = tools
        return body

    async def complete(self, request: ModelRequest) -> AssistantTurn:
        raw = await asyncio.to_thread(self._post, orjson.dumps(self.payload(request)))
        return self._parse(raw)

    def _post(self, body: bytes) -> bytes:
        headers = {"Content-Type": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        req = urllib.request.Request(self._url, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(req, timeout=self._timeout) as response:
                data: bytes = response.read()
                return data
        except urllib.error.HTTPError as exc:
            exc.close()  # it holds the open response; left to the GC it leaks the socket (ResourceWarning)
            raise HostError("HOST-0310", url=self._url, reason=f"HTTP {exc.code}") from exc
        except (urllib.error.URLError, OSError) as exc:
            raise HostError("HOST-0310", url=self._url, reason=str(exc)) from exc

    def _parse(self, raw: bytes) -> AssistantTurn:
        try:
            message = orjson.loads(raw)["choices"][0]["message"]
            calls = tuple(
                RequestedCall(
                    call_id=str(c.get("id", "")),
                    tool=str(c["function"]["name"]),
                    arguments=orjson.loads(c["function"].get("arguments") or "{}"),
                )
                for c in message.get("tool_calls") or []
            )
            return AssistantTurn(text=str(message.get("content") or ""), tool_calls=calls)
        except (orjson.JSONDecodeError, KeyError, IndexError, TypeError, AttributeError) as exc:
            raise HostError("HOST-0311", url=self._url, reason=f"{type(exc).__name__}: {exc}") from exc
