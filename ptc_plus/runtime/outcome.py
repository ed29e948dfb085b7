"""What a run settles to: a value with its logs, or a failure of one of eight kinds.

A program's failure is data, never an exception out of the runtime. Each
kind has a stable error code (PTC-2101..PTC-2108) and a localized message
under ``error.<code>``. :meth:`RunOutcome.report` is what the model is told
of a failure (ADR 0052).
"""

from __future__ import annotations

import enum
from typing import Any

import attrs

from hookspecs import JSONValue
from ptc_plus.i18n import message


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


PROGRAM_NAMES: dict[OutcomeKind, tuple[str, ...]] = {OutcomeKind.EXCEPTION: ("type",)}
"""Params naming something the program made (short; cut to a name's length)."""
PROGRAM_TEXTS: dict[OutcomeKind, tuple[str, ...]] = {
    OutcomeKind.EXCEPTION: ("message",),
    OutcomeKind.INVALID_OUTPUT: ("detail",),
    OutcomeKind.PROTOCOL: ("detail",),
}
"""Params whose text the program (or its process) controls: diagnostics, charged to the output budget
with the traceback and the tool name (ADR 0052). Other params are the host's own short text."""

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
    template: str | None = None
    """A more specific message key than ``error.<code>`` (same code), e.g. a value over the message limit."""

    @property
    def code(self) -> str:
        return self.kind.code

    def message(self, lang: str | None = None) -> str:
        return message(self.template or f"error.{self.code}", lang, **self.params)


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
    notices: tuple[str, ...] = ()
    """REPL notices of a failed kernel cell (``PTC-R002``/``R003``): :meth:`report` puts them right
    after the main error, apart from the captured output. A successful cell's notices are in its logs."""
    volatile: tuple[str, str] | None = None
    """Kernel mode: the cell's first OS-touching event ``(kind, detail)``, which replay cannot
    reproduce; the session's journal keeps it, the model is not shown it here."""

    @property
    def ok(self) -> bool:
        return self.failure is None

    def report(self, lang: str | None = None) -> str:
        """What the model is told of a failed run: the kind, its code and message, the program's
        traceback (its own frames and line numbers only), the captured output in order, and notes.

        Every part the program controls was charged to the output budget (logs as they came,
        diagnostics by :meth:`~ptc_plus.runtime.ledger.HostLedger.fit_failure`), so the report is
        at most the budget plus this fixed framing. For a run that succeeded it is empty.
        """
        if self.failure is None:
            return ""
        failure = self.failure
        parts = [f"{failure.kind} ({failure.code}): {failure.message(lang)}\n"]
        parts.extend(_line_ended(notice) for notice in self.notices)
        if failure.traceback:
            parts.append(_line_ended(failure.traceback))
        if self.logs:
            parts.append(message("runtime.report.output", lang) + "\n")
            for entry in self.logs:
                parts.append(f"--- {entry.stream} ---\n")
                parts.append(_line_ended(entry.text))
        parts.extend(message("runtime.report.note", lang, note=note) + "\n" for note in self.notes)
        return "".join(parts).rstrip("\n")

    def to_json(self, lang: str | None = None) -> dict[str, JSONValue]:
        """The shape ``ptc-plus exec --json`` prints (the model sees the value shape, or :meth:`report`)."""
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


def _line_ended(text: str) -> str:
    return text if text.endswith("\n") else text + "\n"
