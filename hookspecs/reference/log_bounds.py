"""What the session log keeps of a nested call's arguments and result (ADR 0087).

A program makes nested calls each under its own limits (message size,
pending count); logged whole, 160 calls of 8 MB grew one session log to
2.4 GB. So a nested call's arguments and its result are logged whole only
while they are small (:data:`WHOLE_VALUE_BYTES` of canonical JSON each) and
the outer call's share of whole values (:data:`RUN_WHOLE_BYTES`) lasts;
beyond that the event carries ``None`` in their place and a digest beside it
(``arguments_digest`` / ``result_digest``: ``{"bytes": n, "sha256": hex}``
of the canonical JSON), and the result keeps its status, its error's code
and the start of its message. Calls of the model (top-level) and direct
calls are logged whole as before: the surface is built from them.

Either way what is logged is a copy made when the event is built, so a tool
mutating its arguments or result afterwards cannot alter the log.
"""

from __future__ import annotations

import collections
import hashlib
from typing import Any

import attrs
import orjson

from hookspecs.serialization import canonical_bytes, detached, unstructure
from hookspecs.types import ToolCall, ToolResult

WHOLE_VALUE_BYTES = 16 * 1024
"""Largest canonical JSON of a nested call's arguments, or of its result, that is logged whole."""
RUN_WHOLE_BYTES = 1024 * 1024
"""Bytes of whole arguments and results the nested calls of one outer call may log in all."""
ERROR_MESSAGE_CHARS = 512
"""Characters of an elided result's error message kept in the log."""
_TRACKED_RUNS = 1024
"""Outer calls whose spending is remembered (the oldest is forgotten first; its calls have long settled)."""


def digest(raw: bytes) -> dict[str, object]:
    """The stand-in for an elided value: its canonical size and SHA-256."""
    return {"bytes": len(raw), "sha256": hashlib.sha256(raw).hexdigest()}


class NestedLogBounds:
    """Builds the logged form of calls' arguments and results, counting each outer call's whole bytes."""

    def __init__(self) -> None:
        self._spent: collections.OrderedDict[tuple[str, str], int] = collections.OrderedDict()
        """(session id, outer call id) -> whole bytes its nested calls logged: call ids are unique per session."""

    def started(self, call: ToolCall) -> dict[str, object]:
        """``arguments`` (a copy, or ``None``) and, when elided, ``arguments_digest``, for ``tool-started``."""
        if call.parent_call_id is None:
            return {"arguments": detached(call.arguments)}
        raw = canonical_bytes(call.arguments)
        if self._take((call.caller.session_id, call.parent_call_id), len(raw)):
            return {"arguments": orjson.loads(raw)}
        return {"arguments": None, "arguments_digest": digest(raw)}

    def settled(self, call: ToolCall, result: ToolResult) -> dict[str, object]:
        """``result`` (a copy, or a summary without value) and, when elided, ``result_digest``."""
        if call.parent_call_id is None:
            return {"result": unstructure(result)}
        # The shell is unstructured without the value, which may be large: walking it is what costs.
        shell: dict[str, Any] = unstructure(attrs.evolve(result, value=None))
        raw = canonical_bytes({**shell, "value": result.value})
        if self._take((call.caller.session_id, call.parent_call_id), len(raw)):
            return {"result": orjson.loads(raw)}
        summary = {**shell, "presentation": None, "metadata": {}}
        error = shell.get("error")
        if isinstance(error, dict):
            summary["error"] = {
                "code": error.get("code"),
                "message": str(error.get("message", ""))[:ERROR_MESSAGE_CHARS],
                "data": {},
            }
        return {"result": summary, "result_digest": digest(raw)}

    def _take(self, outer: tuple[str, str], size: int) -> bool:
        """Whether ``size`` more whole bytes fit ``outer``'s share (and count them if so)."""
        if size > WHOLE_VALUE_BYTES:
            return False
        spent = self._spent.pop(outer, 0)
        self._spent[outer] = spent  # most recently used last
        while len(self._spent) > _TRACKED_RUNS:
            self._spent.popitem(last=False)
        if spent + size > RUN_WHOLE_BYTES:
            return False
        self._spent[outer] = spent + size
        return True
