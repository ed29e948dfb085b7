"""Model routes of the reference host: the protocol and the scripted model.

A model receives the assembled system prompt, the model-visible message
surface and the tool view, and answers with text and/or tool calls.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import attrs
import orjson

from hookspecs.reference.errors import HostError
from hookspecs.types import JSONObject, ToolSpec


@attrs.frozen(kw_only=True)
class RequestedCall:
    """A tool call the model asked for. ``call_id`` may be empty; the host then assigns one."""

    tool: str
    arguments: JSONObject
    call_id: str = ""


@attrs.frozen(kw_only=True)
class AssistantTurn:
    """One model answer."""

    text: str = ""
    tool_calls: tuple[RequestedCall, ...] = ()


@attrs.frozen(kw_only=True)
class ModelRequest:
    """What the host sends for one model step; ``messages`` use chat roles."""

    system: str
    messages: tuple[dict[str, Any], ...]
    tools: tuple[ToolSpec, ...]


class Model(Protocol):
    """A model route."""

    @property
    def route(self) -> str:
        """Stable name of the route (enters the stable-prefix key, never the text of a turn)."""

    async def complete(self, request: ModelRequest) -> AssistantTurn:
        """Answer one step. Raises :class:`HostError` when the route fails."""


class ScriptedModel:
    """Replays assistant turns from a JSONL script, one per model request.

    Each line is ``{"text": str, "tool_calls": [{"tool": str, "arguments": {...}}]}``.
    Requests are kept in :attr:`requests` so tests and the demo can show
    exactly what the model was sent. Running past the end raises ``HOST-0301``.
    """

    route = "scripted"

    def __init__(self, turns: Sequence[AssistantTurn]) -> None:
        self._turns = list(turns)
        self.requests: list[ModelRequest] = []

    @classmethod
    def from_jsonl(cls, path: Path) -> ScriptedModel:
        turns = []
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if not line.strip():
                continue
            try:
                raw = orjson.loads(line)
                calls = tuple(
                    RequestedCall(tool=str(c["tool"]), arguments=dict(c.get("arguments", {})))
                    for c in raw.get("tool_calls", [])
                )
                turns.append(AssistantTurn(text=str(raw.get("text", "")), tool_calls=calls))
            except (orjson.JSONDecodeError, KeyError, TypeError, AttributeError, ValueError) as exc:
                raise HostError("HOST-0302", path=str(path), line=number, reason=str(exc)) from exc
        return cls(turns)

    @property
    def remaining(self) -> int:
        return len(self._turns) - len(self.requests)

    async def complete(self, request: ModelRequest) -> AssistantTurn:
        index = len(self.requests)
        self.requests.append(request)
        if index >= len(self._turns):
            raise HostError("HOST-0301", count=len(self._turns))
        return self._turns[index]
