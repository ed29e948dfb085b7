"""Outcome kinds as a table and the one projection of a run's outcome (ADR 0122).

Every kind has its row (its code, with a message in both locales; the flags the runtime decides by), the
worker's literals and the journal's replayable outcomes are the table's, and the shape ``run_code`` returns or
fails with reads back, through the host's settled result, into the shape its outcome has: the tool and
``ptc-plus exec`` cannot drift apart.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hookspecs import ResultStatus, ToolError, ToolResult
from ptc_plus.runtime import OUTCOMES, LogEntry, OutcomeKind, RunFailure, RunOutcome, RunShape, outcome_kinds
from ptc_plus.runtime.kernel.journal import REPLAYABLE
from ptc_plus.runtime.worker import outcomes as worker_outcomes

LOCALE = Path(__file__).parents[3] / "locale" / "ptc_plus"


def test_every_outcome_kind_has_its_row_and_its_code_a_message_in_both_locales() -> None:
    assert list(OUTCOMES) == list(OutcomeKind)
    codes = [row.code for row in OUTCOMES.values()]
    assert codes == [f"PTC-21{n:02d}" for n in range(1, len(codes) + 1)]
    for lang in ("en", "zh"):
        catalog = json.loads((LOCALE / f"{lang}.json").read_text(encoding="utf-8"))
        assert all(f"error.{code}" in catalog for code in codes), lang
    assert all(kind.code == kind.row.code for kind in OutcomeKind)


def test_the_worker_reports_exactly_the_kinds_the_table_says_it_may() -> None:
    assert {str(kind) for kind in outcome_kinds("reported")} == worker_outcomes.REPORTED
    assert {worker_outcomes.EXCEPTION, worker_outcomes.INVALID_OUTPUT, worker_outcomes.OUTPUT_LIMIT} == (
        worker_outcomes.REPORTED
    )


def test_the_flags_the_runtime_decides_by_come_from_the_rows() -> None:
    assert {"ok", *(str(kind) for kind in outcome_kinds("replayable"))} == REPLAYABLE
    assert outcome_kinds("cancels") == {OutcomeKind.TIMEOUT, OutcomeKind.ABORT}
    assert outcome_kinds("replayable") == outcome_kinds("reported")
    assert OutcomeKind.EXCEPTION.row.program_names == ("type",)


OUTCOMES_TO_PROJECT = [
    RunOutcome(value={"n": 1}, logs=(LogEntry(stream="stdout", text="hi\n"),), calls=2, notes=("clamped",)),
    RunOutcome(
        failure=RunFailure(
            kind=OutcomeKind.EXCEPTION,
            params={"type": "ToolCallError", "message": "no"},
            traceback="Traceback ...\n",
            tool_name="read_file",
        ),
        logs=(LogEntry(stream="stderr", text="oops\n"),),
        calls=1,
    ),
    RunOutcome(failure=RunFailure(kind=OutcomeKind.TIMEOUT, params={"seconds": "2"}), notes=("n",)),
    RunOutcome(failure=RunFailure(kind=OutcomeKind.PROTOCOL, params={"detail": "bad frame"})),
]


@pytest.mark.parametrize("outcome", OUTCOMES_TO_PROJECT, ids=["value", "exception", "timeout", "protocol"])
def test_what_run_code_returns_reads_back_into_its_outcomes_shape(outcome: RunOutcome) -> None:
    shape = outcome.shape()
    if outcome.failure is None:
        result = ToolResult(call_id="c", tool="run_code", status=ResultStatus.OK, value=shape.tool_value())
    else:
        error = ToolError(code=outcome.failure.code, message=outcome.report(), data=shape.tool_data())
        result = ToolResult(call_id="c", tool="run_code", status=ResultStatus.ERROR, error=error)
    assert RunShape.of_result(result) == shape
    assert RunShape.of_result(result).to_json() == outcome.to_json()
    printed = outcome.to_json()
    if printed["error"] is not None:
        printed["error"].pop("traceback", None)  # exec prints the traceback to standard error
    assert RunShape.of_result(result).to_json(traceback=False) == printed


def test_a_run_the_host_refused_before_it_started_has_the_hosts_code() -> None:
    refused = ToolResult(
        call_id="c", tool="run_code", status=ResultStatus.ERROR, error=ToolError(code="PTC-1001", message="denied")
    )
    cancelled = ToolResult(call_id="c", tool="run_code", status=ResultStatus.CANCELLED)
    assert RunShape.of_result(refused).to_json(traceback=False)["error"] == {
        "kind": "exception",
        "code": "PTC-1001",
        "message": "denied",
    }
    assert RunShape.of_result(cancelled).to_json(traceback=False)["error"] == {
        "kind": "abort",
        "code": "cancelled",
        "message": "cancelled",
    }
