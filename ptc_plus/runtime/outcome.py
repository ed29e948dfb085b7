"""What a run settles to: a value with its logs, or a failure of one of eight kinds.

A program's failure is data, never an exception out of the runtime. Each
kind has a stable error code (PTC-2101..PTC-2108) and a localized message
under ``error.<code>``.
"""

from __future__ import annotations

import enum
from typing import Any

import attrs

from hookspecs import JSONValue
from hookspecs.i18n import message


class OutcomeKind(enum.StrEnum):
    EXCEPTION = "exception"
    TIMEOUT = "timeout"
    ABORT = "abort"
    WORKER_EXIT = "worker-exit"
    INVALID_OUTPUT = "invalid-output"
    OUTPUT_LIMIT = "output-limit"
    PROTOCOL = "protocol"
    SANDBOX_UNAVAILABLE = "sandbox-unavailable"

    @property
    def code(self) -> str:
        return _CODES[self]


_CODES = {
    OutcomeKind.EXCEPTION: "PTC-2101",
    OutcomeKind.TIMEOUT: "PTC-2102",
    OutcomeKind.ABORT: "PTC-2103",
    OutcomeKind.WORKER_EXIT: "PTC-2104",
    OutcomeKind.INVALID_OUTPUT: "PTC-2105",
    OutcomeKind.OUTPUT_LIMIT: "PTC-2106",
    OutcomeKind.PROTOCOL: "PTC-2107",
    OutcomeKind.SANDBOX_UNAVAILABLE: "PTC-2108",
}


@attrs.frozen(kw_only=True)
class LogEntry:
    """Captured output of one stream, in order: ``stdout``, ``stderr``, ``log`` (the logging
    module), or ``fd1``/``fd2`` (raw writes to the descriptors, e.g. from subprocesses)."""

    stream: str
    text: str

    def to_json(self) -> dict[str, str]:
        return {"stream": self.stream, "text": self.text}


@attrs.frozen(kw_only=True)
class RunFailure:
    """Why a run failed. ``params`` fill the kind's message template."""

    kind: OutcomeKind
    params: dict[str, Any] = attrs.field(factory=dict)
    traceback: str | None = None
    """For ``exception``: the traceback trimmed to the program's own frames."""
    tool_name: str | None = None
    """For an uncaught ``ToolCallError``: the tool that failed."""

    @property
    def code(self) -> str:
        return self.kind.code

    def message(self, lang: str | None = None) -> str:
        return message(f"error.{self.code}", lang, **self.params)


@attrs.frozen(kw_only=True)
class RunOutcome:
    """A settled run. Exactly one of ``value`` (when ``failure is None``) or ``failure`` holds."""

    value: JSONValue = None
    failure: RunFailure | None = None
    logs: tuple[LogEntry, ...] = ()
    calls: int = 0
    """Nested tool calls the program submitted."""
    notes: tuple[str, ...] = ()
    """Things the caller should know (for example a clamped timeout)."""

    @property
    def ok(self) -> bool:
        return self.failure is None

    def to_json(self, lang: str | None = None) -> dict[str, JSONValue]:
        """The shape ``ptc-plus exec --json`` prints and the model sees."""
        error: dict[str, JSONValue] | None = None
        if self.failure is not None:
            error = {"kind": str(self.failure.kind), "code": self.failure.code, "message": self.failure.message(lang)}
            if self.failure.traceback:
                error["traceback"] = self.failure.traceback
            if self.failure.tool_name is not None:
                error["tool_name"] = self.failure.tool_name
        return {
            "ok": self.ok,
            "value": self.value,
            "error": error,
            "logs": [entry.to_json() for entry in self.logs],
            "calls": self.calls,
            "notes": list(self.notes),
        }
