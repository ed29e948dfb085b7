"""The model-visible surface of a session, derived from its events.

Live sessions and resumed ones build the surface through the same
:meth:`Surface.apply`, so a resume reproduces exactly what the model saw.
Context messages supersede earlier ones with the same provenance;
compaction replaces everything but the kept entries (tool calls and, since
contract 1.3, context messages) with a summary. A compaction event written
before 1.3 has no ``kept_provenances``: it kept no context message, and
replaying it still keeps none.
"""

from __future__ import annotations

from typing import Any

import attrs
import orjson

from hookspecs.reference.session_log import Event
from hookspecs.serialization import canonical_bytes
from hookspecs.types import ToolResult


@attrs.frozen(kw_only=True)
class SurfaceEntry:
    """One model-visible message and what it is made of."""

    message: dict[str, Any]
    turn: int
    provenance: str | None = None
    call_ids: tuple[str, ...] = ()


class Surface:
    """Ordered entries the next model request will carry (after the system prompt)."""

    def __init__(self) -> None:
        self.entries: list[SurfaceEntry] = []

    def messages(self) -> tuple[dict[str, Any], ...]:
        return tuple(e.message for e in self.entries)

    def visible_call_ids(self) -> set[str]:
        return {cid for e in self.entries for cid in e.call_ids}

    def provenances(self, turn: int) -> tuple[str, ...]:
        """Provenances of the context messages ``turn`` committed that are still on the surface, in order."""
        return tuple(e.provenance for e in self.entries if e.provenance is not None and e.turn == turn)

    def apply(self, event: Event) -> None:
        """Update the surface for one persisted event (events that change nothing are ignored)."""
        data = event.data
        if event.type == "user-message":
            self._add({"role": "user", "content": data["text"]}, data["turn"])
        elif event.type == "assistant-message":
            calls = data.get("tool_calls", [])
            message: dict[str, Any] = {"role": "assistant", "content": data.get("text", "")}
            if calls:
                message["tool_calls"] = [
                    {"id": c["call_id"], "name": c["tool"], "arguments": c["arguments"]} for c in calls
                ]
            self._add(message, data["turn"], call_ids=tuple(c["call_id"] for c in calls))
        elif event.type == "tool-settled" and data.get("top_level", False):
            self._add(
                {"role": "tool", "tool_call_id": data["call_id"], "content": presented(data["result"])},
                data["turn"],
                call_ids=(data["call_id"],),
            )
        elif event.type == "context-message":
            provenance = data["provenance"]
            self.entries = [e for e in self.entries if e.provenance != provenance]
            self._add({"role": "system", "content": data["text"]}, data["turn"], provenance=provenance)
        elif event.type == "compaction":
            kept = set(data["kept_call_ids"])
            provenances = set(data.get("kept_provenances") or ())
            survivors = [
                e
                for e in self.entries
                if (e.call_ids and set(e.call_ids) <= kept)
                or (e.provenance is not None and e.provenance in provenances)
            ]
            summary = SurfaceEntry(message={"role": "user", "content": data["summary"]}, turn=data["turn"])
            self.entries = [summary, *survivors]

    def _add(
        self, message: dict[str, Any], turn: int, *, provenance: str | None = None, call_ids: tuple[str, ...] = ()
    ) -> None:
        self.entries.append(SurfaceEntry(message=message, turn=turn, provenance=provenance, call_ids=call_ids))


def presented(result: dict[str, Any]) -> str:
    """What the model sees of a result: its presentation, else the value or error as JSON."""
    if result.get("presentation") is not None:
        return str(result["presentation"])
    if result["status"] == "ok":
        return orjson.dumps(result["value"], option=orjson.OPT_SORT_KEYS).decode()
    error = result.get("error") or {}
    return orjson.dumps({"error": error.get("code"), "message": error.get("message")}).decode()


def seat_text(result: ToolResult) -> str:
    """What a client in the model's seat (mcp-serve, the llm plugin, ADR 0073) is shown of ``result``: its
    presentation, else its value (text as is, else canonical JSON), else the error with its code once."""
    if result.presentation is not None:
        return result.presentation
    if result.ok:
        return result.value if isinstance(result.value, str) else canonical_bytes(result.value).decode()
    if result.error is None:
        return str(result.status)
    # A message that names its code already (run_code's "exception (PTC-2101): …") is not prefixed again.
    if result.error.code in result.error.message:
        return result.error.message
    return f"{result.error.code}: {result.error.message}"
