"""Diagnostics of a failed run: charged to the output budget (cut and marked), and shown to the model.

The product's rule: "The output budget covers logs, the returned value and diagnostics
together" — an exception's message and traceback are cut to what the logs
left of ``max_output_bytes``, saying how much was cut; the child is not
trusted to do it, so the host cuts again. And a failed ``run_code`` tells the
model what happened: the kind, the message, the program's own traceback and
the captured output (ADR 0052).
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

import orjson
import pytest

from hookspecs import ToolFailure
from hookspecs.reference import ReferenceHost
from hookspecs.reference.surface import presented
from hookspecs.serialization import unstructure
from ptc_plus.runtime.code_runtime import CodeRuntime
from ptc_plus.runtime.ledger import HostLedger
from ptc_plus.runtime.outcome import LogEntry, OutcomeKind, RunFailure, RunOutcome
from ptc_plus.runtime.tool import run_code_definition

from .conftest import FakeServices, RuntimeFactory, limits_with, outer_context

MARKER = re.compile(r"\[… (\d+) characters omitted …\]")


def _cost(text: str) -> int:
    """Bytes ``text`` adds to a JSON document (what the ledger charges)."""
    return len(orjson.dumps(text)) - 2


def _without_markers(text: str) -> str:
    return MARKER.sub("", text)


def _omitted(text: str) -> int:
    return sum(int(count) for count in MARKER.findall(text))


def _diagnostics_cost(outcome: RunOutcome) -> int:
    failure = outcome.failure
    assert failure is not None
    texts = [str(value) for value in failure.params.values()] + [failure.traceback or "", failure.tool_name or ""]
    return sum(_cost(_without_markers(text)) for text in texts)


def _logs_cost(outcome: RunOutcome) -> int:
    return len(orjson.dumps([entry.to_json() for entry in outcome.logs]))


# -- item 12: the budget covers diagnostics ------------------------------------------------------------------


@pytest.mark.asyncio
async def test_a_huge_exception_message_is_cut_to_the_budget(make_runtime: RuntimeFactory, workspace: Path) -> None:
    outcome = await make_runtime(max_output_bytes=1000).run('raise ValueError("x" * 100000)', workspace=workspace)
    failure = outcome.failure
    assert failure is not None and failure.kind is OutcomeKind.EXCEPTION
    assert _diagnostics_cost(outcome) <= 1000
    message = failure.params["message"]
    kept = _without_markers(message)
    assert set(kept) <= {"x"} and kept and message.startswith(kept)
    assert len(kept) + _omitted(message) == 100_000  # it says it was cut, and by exactly how much
    trace = failure.traceback or ""
    assert 'File "<program>", line 1, in <module>' in trace and MARKER.search(trace)


@pytest.mark.asyncio
async def test_logs_and_diagnostics_share_the_budget(make_runtime: RuntimeFactory, workspace: Path) -> None:
    code = 'print("a" * 900)\nraise ValueError("y" * 5000)'
    outcome = await make_runtime(max_output_bytes=1000).run(code, workspace=workspace)
    assert outcome.failure is not None and outcome.failure.kind is OutcomeKind.EXCEPTION
    assert outcome.logs == (LogEntry(stream="stdout", text="a" * 900 + "\n"),)
    assert _logs_cost(outcome) + _diagnostics_cost(outcome) <= 1000
    assert MARKER.search(outcome.failure.params["message"])


@pytest.mark.asyncio
async def test_diagnostics_within_the_budget_are_whole(make_runtime: RuntimeFactory, workspace: Path) -> None:
    outcome = await make_runtime(max_output_bytes=1000).run('print("hi")\nraise KeyError("k")', workspace=workspace)
    assert outcome.failure is not None
    assert outcome.failure.params == {"type": "KeyError", "message": "'k'"}
    assert not MARKER.search(outcome.failure.traceback or "")


@pytest.mark.asyncio
async def test_an_invalid_output_detail_is_charged_too(make_runtime: RuntimeFactory, workspace: Path) -> None:
    code = "key = 'k' * 50\nvalue = float('nan')\nfor _ in range(100):\n    value = {key: value}\nreturn value"
    outcome = await make_runtime(max_output_bytes=1000).run(code, workspace=workspace)
    assert outcome.failure is not None and outcome.failure.kind is OutcomeKind.INVALID_OUTPUT
    assert _diagnostics_cost(outcome) <= 1000 and MARKER.search(outcome.failure.params["detail"])


FORGED_DONE = (
    "import gc, os\n"
    "channel = next(o for o in gc.get_objects() if type(o).__name__ == 'ChildChannel')\n"
    "error = {'kind': 'exception', 'type': 'T' * 100000, 'message': 'm' * 100000,\n"
    "         'traceback': 't' * 100000, 'tool_name': 'n' * 100000}\n"
    "channel.send({'type': 'done', 'ok': False, 'error': error})\n"
    "os._exit(0)\n"
)


@pytest.mark.asyncio
async def test_the_host_cuts_diagnostics_the_child_did_not(make_runtime: RuntimeFactory, workspace: Path) -> None:
    # The program speaks for the child: a forged ``done`` frame with 400 KB of diagnostics.
    outcome = await make_runtime(max_output_bytes=1000).run(FORGED_DONE, workspace=workspace)
    failure = outcome.failure
    assert failure is not None and failure.kind is OutcomeKind.EXCEPTION, failure and failure.message()
    assert _diagnostics_cost(outcome) <= 1000
    for text in (failure.params["type"], failure.params["message"], failure.traceback or "", failure.tool_name or ""):
        assert MARKER.search(text)
    assert len(_without_markers(failure.params["message"])) + _omitted(failure.params["message"]) == 100_000


def test_cutting_counts_the_serialized_form_and_keeps_characters_whole() -> None:
    text = 'é"\\\n\x01漢' * 500
    for budget in range(0, 200, 7):
        ledger = HostLedger(budget + 2)
        failure = ledger.fit_failure(
            RunFailure(kind=OutcomeKind.EXCEPTION, params={"type": "E", "message": text}, traceback=text)
        )
        message, trace = failure.params["message"], failure.traceback or ""
        name = _without_markers(failure.params["type"])
        assert _cost(_without_markers(message)) + _cost(_without_markers(trace)) + _cost(name) <= budget
        assert ledger.used <= ledger.max_bytes
        kept = _without_markers(message)
        assert text.startswith(kept) and len(kept) + _omitted(message) == len(text)
        head, _, tail = trace.partition(MARKER.search(trace)[0]) if MARKER.search(trace) else (trace, "", "")
        assert text.startswith(head) and text.endswith(tail)
        assert len(head) + len(tail) + _omitted(trace) == len(text)


def test_a_text_the_child_already_cut_gets_one_marker_with_the_total() -> None:
    child_cut = "a" * 50 + "[… 1000 characters omitted …]"
    for budget in (20, 60):  # the host's cut ends before the child's marker, or inside it
        ledger = HostLedger(budget + 2 + 1)  # "[]" and the type name "E"
        failure = ledger.fit_failure(RunFailure(kind=OutcomeKind.EXCEPTION, params={"type": "E", "message": child_cut}))
        message = failure.params["message"]
        kept = min(budget, 50)
        assert message == "a" * kept + f"[… {50 - kept + 1000} characters omitted …]"
    trace = "h" * 40 + "[… 500 characters omitted …]" + "t" * 40
    ledger = HostLedger(2 + 1 + 2 + 30)
    failure = ledger.fit_failure(
        RunFailure(kind=OutcomeKind.EXCEPTION, params={"type": "E", "message": "m"}, traceback=trace)
    )
    # 33 bytes left after "[]": 1 for the type, 1 for the message, 31 for the traceback (15 + 16).
    assert failure.traceback == "h" * 15 + "[… 549 characters omitted …]" + "t" * 16


def test_host_kinds_keep_their_own_text_when_the_budget_is_spent() -> None:
    ledger = HostLedger(10)
    ledger.used = 11  # logs went over: an output-limit run
    failure = ledger.fit_failure(RunFailure(kind=OutcomeKind.OUTPUT_LIMIT, params={"limit": 10}))
    assert failure.params == {"limit": 10}
    failure = ledger.fit_failure(RunFailure(kind=OutcomeKind.WORKER_EXIT, params={"detail": "exit code 1"}))
    assert failure.params == {"detail": "exit code 1"}


# -- item 13: the model is told what happened ----------------------------------------------------------------

FAILING = (
    "import sys\n"
    "print('step one done')\n"
    "print('careful', file=sys.stderr)\n"
    "def parse(text):\n"
    "    return int(text)\n"
    "parse('not a number')\n"
)


def _assert_tells_what_happened(text: str) -> None:
    assert "exception" in text and "PTC-2101" in text
    assert "ValueError: invalid literal for int() with base 10: 'not a number'" in text
    assert 'File "<program>", line 6, in <module>' in text and 'File "<program>", line 5, in parse' in text
    assert "return int(text)" in text
    assert "step one done" in text and "careful" in text
    assert text.index("stdout") < text.index("step one done") < text.index("stderr") < text.index("careful")
    assert "worker" not in text and "asyncio" not in text


@pytest.mark.asyncio
async def test_a_failed_run_code_tells_the_model_what_happened(workspace: Path) -> None:
    runtime = CodeRuntime(limits_with())
    try:
        definition = run_code_definition(runtime=runtime)
        with pytest.raises(ToolFailure) as caught:
            await definition.handler({"description": "d", "code": FAILING}, outer_context(FakeServices(workspace)))
    finally:
        await runtime.aclose()
    _assert_tells_what_happened(caught.value.message)
    assert caught.value.data["message"].startswith("The program raised ValueError")


@pytest.mark.asyncio
async def test_the_reference_host_presents_it_to_the_model(workspace: Path) -> None:
    runtime = CodeRuntime(limits_with())
    definition = run_code_definition(runtime=runtime)
    try:
        with tempfile.TemporaryDirectory() as state:
            async with ReferenceHost(
                workspace=workspace, state_dir=Path(state), tools=[definition], load_entry_points=False
            ) as host:
                session = await host.start_session(user_id="u")
                result = await session.call_tool("run_code", {"description": "d", "code": FAILING})
    finally:
        await runtime.aclose()
    assert not result.ok
    shown = orjson.loads(presented(unstructure(result)))  # the reference host shows the error as JSON
    assert shown["error"] == "PTC-2101"
    _assert_tells_what_happened(shown["message"])


@pytest.mark.asyncio
async def test_a_timed_out_run_shows_its_output(workspace: Path) -> None:
    runtime = CodeRuntime(limits_with())
    try:
        definition = run_code_definition(runtime=runtime)
        code = "import time\nprint('started', flush=True)\ntime.sleep(30)"
        with pytest.raises(ToolFailure) as caught:
            await definition.handler(
                {"description": "d", "code": code, "timeout_s": 1.5}, outer_context(FakeServices(workspace))
            )
    finally:
        await runtime.aclose()
    assert "timeout" in caught.value.message and "PTC-2102" in caught.value.message
    assert "started" in caught.value.message


@pytest.mark.asyncio
async def test_the_presentation_stays_within_the_budget(workspace: Path) -> None:
    runtime = CodeRuntime(limits_with(max_output_bytes=2000))
    try:
        definition = run_code_definition(runtime=runtime)
        code = "print('p' * 1500)\nraise ValueError('v' * 100000)"
        with pytest.raises(ToolFailure) as caught:
            await definition.handler({"description": "d", "code": code}, outer_context(FakeServices(workspace)))
    finally:
        await runtime.aclose()
    text = caught.value.message
    assert "p" * 1500 in text and "ValueError: vvv" in text and MARKER.search(text)
    # The budget plus fixed framing (headings, the kind's message template, cut markers).
    assert len(text.encode()) <= 2000 + 400
