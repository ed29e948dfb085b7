"""The one projection of a run's outcome: what ``run_code`` returns or fails with, and what ``ptc-plus exec`` shows.

A settled run (:class:`~ptc_plus.runtime.outcome.RunOutcome`) reaches three readers: the ``run_code`` tool
returns its value (``{"value", "logs", "calls", "notes"}``) or fails with its data (``{"kind", "message",
"traceback"?, "tool_name"?, "logs", "calls", "notes"}``); ``ptc-plus exec`` reads the host's settled result
back into ``{"ok", "value", "error", "logs", "calls", "notes"}``. :class:`RunShape` is that shape once
(:meth:`RunOutcome.shape <ptc_plus.runtime.outcome.RunOutcome.shape>` builds it), with each reader's form as a
method, so a field added to a run's outcome is added here (ADR 0122). Every form keeps
the keys, their order and their values the three writers had.
"""

from __future__ import annotations

from typing import Any

import attrs

from hookspecs import JSONValue, ResultStatus, ToolResult


@attrs.frozen(kw_only=True)
class RunError:
    """A failed run as its readers see it: the outcome kind, its code and message (and the program's traceback,
    the tool that failed)."""

    kind: str
    code: str
    message: str
    traceback: str | None = None
    tool_name: str | None = None


@attrs.frozen(kw_only=True)
class RunShape:
    """A settled run: its value (``error is None``) or its error, with its captured output, calls and notes."""

    value: JSONValue = None
    error: RunError | None = None
    logs: tuple[Any, ...] = ()
    """``{"stream", "text"}`` per captured piece, in order."""
    calls: int = 0
    notes: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return self.error is None

    @classmethod
    def of_result(cls, result: ToolResult) -> RunShape:
        """The shape of the host's settled ``run_code`` result (:meth:`tool_value` or :meth:`tool_data` read back).

        A failure the runtime never saw (the host refused or cancelled the call before the run started) has the
        host's code, its message and kind ``abort`` (cancelled) or ``exception``.
        """
        if result.ok:
            body: Any = result.value
            return cls(value=body["value"], logs=tuple(body["logs"]), calls=body["calls"], notes=_notes(body))
        data: dict[str, Any] = dict(result.error.data) if result.error is not None else {}
        fallback = "abort" if result.status is ResultStatus.CANCELLED else "exception"
        # ``data["message"]``: the outcome's own message (the error's message is the model's full report).
        text = data.get("message", result.error.message) if result.error else str(result.status)
        error = RunError(
            kind=str(data.get("kind", fallback)),
            code=result.error.code if result.error is not None else str(result.status),
            message=text,
            traceback=data.get("traceback"),
            tool_name=data.get("tool_name"),
        )
        return cls(error=error, logs=tuple(data.get("logs", [])), calls=data.get("calls", 0), notes=_notes(data))

    def tool_value(self) -> dict[str, JSONValue]:
        """What ``run_code`` returns for a run that succeeded."""
        return {"value": self.value, "logs": list(self.logs), "calls": self.calls, "notes": list(self.notes)}

    def tool_data(self) -> dict[str, JSONValue]:
        """The data of the failure ``run_code`` raises for a run that failed."""
        if self.error is None:
            raise ValueError("a run that succeeded has no failure data")
        data: dict[str, JSONValue] = {"kind": self.error.kind, "message": self.error.message}
        if self.error.traceback:
            data["traceback"] = self.error.traceback
        if self.error.tool_name is not None:
            data["tool_name"] = self.error.tool_name
        return data | {"logs": list(self.logs), "calls": self.calls, "notes": list(self.notes)}

    def to_json(self, *, traceback: bool = True) -> dict[str, Any]:
        """``{"ok", "value", "error", "logs", "calls", "notes"}``; ``error`` is ``None`` or ``{"kind", "code",
        "message", "traceback"?, "tool_name"?}`` (``traceback=False``: without it, as ``ptc-plus exec`` prints it,
        the traceback going to standard error)."""
        error: dict[str, JSONValue] | None = None
        if self.error is not None:
            error = {"kind": self.error.kind, "code": self.error.code, "message": self.error.message}
            if traceback and self.error.traceback:
                error["traceback"] = self.error.traceback
            if self.error.tool_name is not None:
                error["tool_name"] = self.error.tool_name
        return {
            "ok": self.ok,
            "value": self.value,
            "error": error,
            "logs": list(self.logs),
            "calls": self.calls,
            "notes": list(self.notes),
        }


def _notes(body: Any) -> tuple[str, ...]:
    return tuple(body.get("notes", []))
