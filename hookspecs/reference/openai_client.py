"""An OpenAI-compatible chat-completions model route over the ``openai`` SDK (ADR 0075).

It speaks ``POST {base_url}/chat/completions`` with function tools, so it
works with any server implementing that wire format. The SDK retries a 408,
409, 429 or 5xx answer and a dropped connection with exponential back-off
(honouring ``Retry-After``); what still fails is a :class:`HostError` carrying
the server's own error text. The key goes to the SDK only: it is never part of
an error, a usage record or :attr:`OpenAIChatModel.route`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs
import orjson

from hookspecs.reference.errors import HostError
from hookspecs.reference.model import AssistantTurn, ModelRequest, RequestedCall

MAX_ERROR_TEXT = 500
"""Characters of a server's error text kept in the message (some servers answer with a whole HTML page)."""


@attrs.frozen(kw_only=True)
class RequestUsage:
    """Token counts of one request, as the server reported them; ``None`` where it reported nothing.

    ``uncached_input`` is the prompt tokens minus the cached ones, known only when both are; ``input`` is the
    prompt tokens, known whenever the server reported them (with or without the cached part).
    """

    cached_input: int | None
    uncached_input: int | None
    output: int | None
    input: int | None = None

    @classmethod
    def from_wire(cls, usage: Any) -> RequestUsage:
        """From the wire's ``usage`` object (a dict or an SDK model); absent fields stay unknown."""
        if usage is None:
            return cls(cached_input=None, uncached_input=None, output=None)
        data = usage if isinstance(usage, dict) else usage.model_dump()
        prompt = _count(data.get("prompt_tokens"))
        details = data.get("prompt_tokens_details")
        cached = _count(details.get("cached_tokens")) if isinstance(details, dict) else None
        uncached = prompt - cached if prompt is not None and cached is not None else None
        return cls(
            cached_input=cached, uncached_input=uncached, output=_count(data.get("completion_tokens")), input=prompt
        )


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


TextSink = Callable[[str], None]
UsageSink = Callable[[RequestUsage], None]


class OpenAIChatModel:
    """A model route over an OpenAI-compatible endpoint.

    ``stream=True`` asks for server-sent chunks and hands each piece of answer
    text to :attr:`on_text` as it arrives. Every request that got an answer
    reports its usage to :attr:`on_usage` and appends it to :attr:`usage`.
    Failures raise :class:`HostError` ``HOST-0310`` (transport or HTTP status,
    after the retries) or ``HOST-0311`` (an answer that is not a chat completion).
    """

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key: str | None = None,
        timeout_s: float = 120.0,
        max_retries: int = 3,
        stream: bool = False,
    ) -> None:
        import openai  # a route people choose: the SDK loads only when one is made

        self._base_url = base_url.rstrip("/")
        self._url = self._base_url + "/chat/completions"
        self._model = model
        self._stream = stream
        self.on_text: TextSink | None = None
        self.on_usage: UsageSink | None = None
        self.usage: list[RequestUsage] = []
        self.reached = False
        """Whether any request got an HTTP answer (an error status too): the endpoint was there."""
        # Without a key no Authorization header is sent (a local server needs none); the SDK is
        # never left to read OPENAI_API_KEY itself: the caller decides where a key comes from.
        self._headers: dict[str, Any] = {} if api_key else {"Authorization": openai.omit}
        # Kept only to take it out of error texts: a provider may echo the header it got.
        self._secret = api_key or None
        self._client = openai.AsyncOpenAI(
            api_key=api_key or "no-key",
            base_url=self._base_url,
            timeout=timeout_s,
            max_retries=max_retries,
        )

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
        import openai

        body = self.payload(request)
        try:
            if self._stream:
                return await self._streamed(body)
            raw = await self._client.chat.completions.with_raw_response.create(**body, extra_headers=self._headers)
            self.reached = True
            return self._parse(raw.http_response.content)
        except openai.APIStatusError as exc:
            self.reached = True
            raise HostError("HOST-0310", url=self._url, reason=_status_reason(exc, self._secret)) from None
        except openai.APIConnectionError as exc:
            reason = redact(str(exc.__cause__ or exc), self._secret)
            raise HostError("HOST-0310", url=self._url, reason=reason) from None
        except openai.APIError as exc:  # a stream that broke off or carried an error event
            raise HostError("HOST-0311", url=self._url, reason=redact(exc.message, self._secret)) from None

    def _record(self, usage: Any) -> None:
        counted = RequestUsage.from_wire(usage)
        self.usage.append(counted)
        if self.on_usage is not None:
            self.on_usage(counted)

    async def _streamed(self, body: dict[str, Any]) -> AssistantTurn:
        stream = await self._client.chat.completions.create(
            **body, stream=True, stream_options={"include_usage": True}, extra_headers=self._headers
        )
        self.reached = True
        text: list[str] = []
        calls: dict[int, dict[str, Any]] = {}
        usage: Any = None
        try:
            async for chunk in stream:
                usage = chunk.usage or usage
                for choice in chunk.choices:
                    delta = choice.delta
                    if delta.content:
                        text.append(delta.content)
                        if self.on_text is not None:
                            self.on_text(delta.content)
                    for piece in delta.tool_calls or ():
                        call = calls.setdefault(piece.index, {"id": "", "name": "", "arguments": ""})
                        call["id"] = piece.id or call["id"]
                        if piece.function is not None:
                            call["name"] += piece.function.name or ""
                            call["arguments"] += piece.function.arguments or ""
        finally:
            await stream.close()
        self._record(usage)
        try:
            requested = tuple(
                RequestedCall(call_id=c["id"], tool=c["name"], arguments=_arguments(c["arguments"]))
                for _, c in sorted(calls.items())
            )
        except (orjson.JSONDecodeError, TypeError) as exc:
            raise HostError("HOST-0311", url=self._url, reason=f"{type(exc).__name__}: {exc}") from None
        return AssistantTurn(text="".join(text), tool_calls=requested)

    def _parse(self, raw: bytes) -> AssistantTurn:
        try:
            document = orjson.loads(raw)
            message = document["choices"][0]["message"]
            calls = tuple(
                RequestedCall(
                    call_id=str(c.get("id", "")),
                    tool=str(c["function"]["name"]),
                    arguments=_arguments(c["function"].get("arguments")),
                )
                for c in message.get("tool_calls") or []
            )
            turn = AssistantTurn(text=str(message.get("content") or ""), tool_calls=calls)
        except (orjson.JSONDecodeError, KeyError, IndexError, TypeError, AttributeError) as exc:
            raise HostError("HOST-0311", url=self._url, reason=f"{type(exc).__name__}: {exc}") from None
        self._record(document.get("usage"))
        return turn

    async def aclose(self) -> None:
        await self._client.close()


def _arguments(text: object) -> dict[str, Any]:
    value = orjson.loads(text or "{}") if isinstance(text, str | None) else text
    if not isinstance(value, dict):
        raise TypeError(f"tool call arguments are not a JSON object: {value!r}")
    return value


REDACTED = "[redacted]"


def redact(text: str, secret: str | None) -> str:
    """``text`` with every occurrence of ``secret`` replaced by :data:`REDACTED` (a server's error text
    may echo the key it was sent; the text then reaches the terminal, the session log and records)."""
    return text.replace(secret, REDACTED) if secret else text


def _status_reason(exc: Any, secret: str | None) -> str:
    """``HTTP <status>: <the server's own error text>``, the key taken out before it is shortened (a cut
    through the key would leave a part of it no replacement finds)."""
    body = exc.body
    text = ""
    if isinstance(body, dict):
        inner = body.get("error", body)
        text = str(inner.get("message") or "") if isinstance(inner, dict) else str(inner)
    elif body is not None:
        text = str(body)
    if not text:
        try:
            text = exc.response.text
        except Exception:  # a streamed body already consumed: the status alone then
            text = ""
    text = " ".join(redact(text, secret).split())
    if len(text) > MAX_ERROR_TEXT:
        text = text[: MAX_ERROR_TEXT - 1] + "…"
    return f"HTTP {exc.status_code}: {text}" if text else f"HTTP {exc.status_code}"
