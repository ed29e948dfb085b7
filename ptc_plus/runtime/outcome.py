"""What a run settles to: a value with its logs, or a failure of one of eight kinds.

A program's failure is data, never an exception out of the runtime. Each
kind has a stable error code (PTC-2101..PTC-2108) and a localized message
under ``error.<code>``. :meth:`RunOutcome.report` is what the model is told
of a failure (ADR 0052).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Any, Literal

import attrs

from hookspecs import JSONValue
from ptc_plus.i18n import message
from ptc_plus.runtime.run_shape import RunError, RunShape


class OutcomeKind(enum.StrEnum):
    """How a failed run ended; what each kind carries is its row in :data:`OUTCOMES` (ADR 0122)."""

    EXCEPTION = "exception"
    TIMEOUT = "timeout"
    ABORT = "abort"
    WORKER_EXIT = "worker-exit"
    INVALID_OUTPUT = "invalid-output"
    OUTPUT_LIMIT = "output-limit"
    PROTOCOL = "protocol"
    SANDBOX_UNAVAILABLE = "sandbox-unavailable"

    @property
    def row(self) -> OutcomeRow:
        return OUTCOMES[self]

    @property
    def code(self) -> str:
        return OUTCOMES[self].code


@attrs.frozen(kw_only=True)
class OutcomeRow:
    """What one outcome kind carries: its stable code and the flags the runtime decides by.

    :ivar code: the error code (``PTC-21xx``); its message is ``error.<code>`` in both locales.
    :ivar reported: the worker may report it in its ``done`` frame (the program ran to its end in a worker that
        lived on); a ``done`` naming any other kind is a protocol violation. The worker writes these kinds as
        literals (it imports the standard library only): ``worker/outcomes.py`` keeps them, checked equal.
    :ivar cancels: nested calls still running are cancelled rather than drained by the host.
    :ivar replayable: a kernel cell that ended so ends the same way when replayed with its recorded results.
    :ivar program_names: params naming something the program made (short; cut to a name's length).
    :ivar program_texts: params whose text the program (or its process) controls: diagnostics, charged to the
        output budget with the traceback and the tool name (ADR 0052). Other params are the host's own text.
    """

    code: str
    reported: bool = False
    cancels: bool = False
    replayable: bool = False
    program_names: tuple[str, ...] = ()
    program_texts: tuple[str, ...] = ()


OUTCOMES: Mapping[OutcomeKind, OutcomeRow] = {
    OutcomeKind.EXCEPTION: OutcomeRow(
        code="PTC-2101", reported=True, replayable=True, program_names=("type",), program_texts=("message",)
    ),
    OutcomeKind.TIMEOUT: OutcomeRow(code="PTC-2102", cancels=True),
    OutcomeKind.ABORT: OutcomeRow(code="PTC-2103", cancels=True),
    OutcomeKind.WORKER_EXIT: OutcomeRow(code="PTC-2104"),
    OutcomeKind.INVALID_OUTPUT: OutcomeRow(code="PTC-2105", reported=True, replayable=True, program_texts=("detail",)),
    OutcomeKind.OUTPUT_LIMIT: OutcomeRow(code="PTC-2106", reported=True, replayable=True),
    OutcomeKind.PROTOCOL: OutcomeRow(code="PTC-2107", program_texts=("detail",)),
    OutcomeKind.SANDBOX_UNAVAILABLE: OutcomeRow(code="PTC-2108"),
}
"""Every outcome kind's row: a new kind adds its member and its row, and the runtime's decisions follow."""


def outcome_kinds(flag: Literal["reported", "cancels", "replayable"]) -> frozenset[OutcomeKind]:
    """The kinds whose row has ``flag`` (``reported``, ``cancels``, ``replayable``) set."""
    return frozenset(kind for kind, row in OUTCOMES.items() if getattr(row, flag))


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

    def shape(self, lang: str | None = None) -> RunShape:
        """The one projection of this run (:class:`~ptc_plus.runtime.run_shape.RunShape`), its message in ``lang``."""
        error = None
        if self.failure is not None:
            error = RunError(
                kind=str(self.failure.kind),
                code=self.failure.code,
                message=self.failure.message(lang),
                traceback=self.failure.traceback or None,
                tool_name=self.failure.tool_name,
            )
        logs = tuple(entry.to_json() for entry in self.logs)
        return RunShape(value=self.value, error=error, logs=logs, calls=self.calls, notes=self.notes)

    def to_json(self, lang: str | None = None) -> dict[str, JSONValue]:
        """The shape ``ptc-plus exec --json`` prints, with the traceback (:meth:`.run_shape.RunShape.to_json`)."""
        return self.shape(lang).to_json()


def _line_ended(text: str) -> str:
    return text if text.endswith("\n") else text + "\n"
