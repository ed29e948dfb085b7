"""What a workflow run has done so far, for people: counters, phase, events (ADR 0116).

:class:`Progress` is updated by the run's lane as children start and end.
Each start and end is also written to the parent session as a log-only
record (:data:`RECORD_KIND`, never shown to the model) through the host's
``append_record``. Writing is best effort: the first failure is kept in
:attr:`Progress.recorder_failure`, recording stops, and the run goes on —
its report says the trace is incomplete rather than passing it off as whole.
Listeners (``ptc-plus chat``'s live view) get every event as it happens; a
listener that raises is dropped, never the run.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import attrs

from hookspecs import AgentRef, HostServices, JSONObject, SessionRecord
from hookspecs.children import ChildResult

RECORD_KIND = "ptc-workflow-progress/v1"
Listener = Callable[["ProgressEvent"], None]
_log = logging.getLogger(__name__)


@attrs.frozen(kw_only=True)
class ProgressEvent:
    """One event of a run: ``kind`` is ``run-started``, ``phase``, ``child-started``, ``child-ended``,
    ``child-reaped`` or ``run-ended``."""

    run_id: str
    kind: str
    call_id: str = ""
    label: str = ""
    phase: str = ""
    ok: bool | None = None
    detail: str = ""

    def payload(self) -> JSONObject:
        return {
            "run_id": self.run_id,
            "kind": self.kind,
            "call_id": self.call_id,
            "label": self.label,
            "phase": self.phase,
            "ok": self.ok,
            "detail": self.detail,
        }


class Progress:
    def __init__(self, run_id: str, services: HostServices, parent: AgentRef, listeners: list[Listener]) -> None:
        self.run_id = run_id
        self._services = services
        self._parent = parent
        self._listeners = listeners
        self.current = ""
        """The phase the script named last."""
        self.started = 0
        """Children admitted (counted against the run's total when requested, before a slot is free)."""
        self.running = 0
        self.succeeded = 0
        self.failed = 0
        self.reaped = 0
        self.recorder_failure = ""
        self._labels: dict[str, str] = {}

    def submitted(self) -> None:
        self.started += 1

    def phase(self, name: str) -> None:
        self.current = name
        self.emit(ProgressEvent(run_id=self.run_id, kind="phase", phase=name))

    def child_started(self, call_id: str, label: str, phase: str) -> None:
        self.running += 1
        self._labels[call_id] = label
        self.emit(ProgressEvent(run_id=self.run_id, kind="child-started", call_id=call_id, label=label, phase=phase))

    def child_ended(self, call_id: str, result: ChildResult, *, ok: bool) -> None:
        self.running -= 1
        if ok:
            self.succeeded += 1
        else:
            self.failed += 1
        label = self._labels.pop(call_id, "")
        detail = result.error[:300] if not result.ok else ("" if ok else "output did not match the schema")
        self.emit(
            ProgressEvent(
                run_id=self.run_id,
                kind="child-ended",
                call_id=call_id,
                label=label,
                phase=self.current,
                ok=ok,
                detail=detail,
            )
        )

    def child_reaped(self, call_id: str) -> None:
        self.running -= 1
        self.reaped += 1
        label = self._labels.pop(call_id, "")
        self.emit(ProgressEvent(run_id=self.run_id, kind="child-reaped", call_id=call_id, label=label, ok=False))

    def emit(self, event: ProgressEvent) -> None:
        for listener in list(self._listeners):
            try:
                listener(event)
            except Exception as exc:
                _log.warning("workflow progress listener dropped", exc_info=exc)
                self._listeners.remove(listener)
        if self.recorder_failure:
            return
        try:
            self._services.append_record(self._parent, SessionRecord(kind=RECORD_KIND, payload=event.payload()))
        except Exception as exc:  # contained: the run goes on, its report says the trace stopped here
            self.recorder_failure = f"{type(exc).__name__}: {exc}"[:300]
            _log.warning("workflow %s: progress recording stopped", self.run_id, exc_info=exc)

    def counters(self) -> JSONObject:
        return {
            "started": self.started,
            "running": self.running,
            "succeeded": self.succeeded,
            "failed": self.failed,
            "reaped": self.reaped,
        }
