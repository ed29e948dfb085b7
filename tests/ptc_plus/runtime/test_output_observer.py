"""The output observer (ADR 0064): sees each piece of output the ledger keeps, as it arrives, and changes
nothing about the run or its outcome."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
import pytest_asyncio

from ptc_plus.config import WORKSPACE_DIR
from ptc_plus.runtime import CodeRuntime, OutcomeKind, OutputObserver

from .conftest import limits_with

PROGRAM = (
    "import logging, os, sys\n"
    "print('one')\n"
    "sys.stderr.write('two\\n')\n"
    "logging.getLogger('app').warning('three')\n"
    "os.write(1, b'four\\n')\n"
    "print('five')\n"
    "return 'done'\n"
)

Factory = Callable[..., CodeRuntime]


@pytest_asyncio.fixture
async def runtime_with() -> AsyncIterator[Factory]:
    made: list[CodeRuntime] = []

    def factory(observer: OutputObserver | None = None, **limits: object) -> CodeRuntime:
        runtime = CodeRuntime(limits_with(**limits), owner_paths=(WORKSPACE_DIR,), observer=observer)
        made.append(runtime)
        return runtime

    yield factory
    for runtime in made:
        await runtime.aclose()


def _joined(pieces: list[tuple[str, str]]) -> dict[str, str]:
    by_stream: dict[str, str] = {}
    for stream, text in pieces:
        by_stream[stream] = by_stream.get(stream, "") + text
    return by_stream


@pytest.mark.asyncio
async def test_the_observer_sees_exactly_the_logs_and_the_outcome_is_unchanged(
    runtime_with: Factory, workspace: Path
) -> None:
    seen: list[tuple[str, str]] = []
    watched = await runtime_with(lambda stream, text: seen.append((stream, text))).run(PROGRAM, workspace=workspace)
    plain = await runtime_with().run(PROGRAM, workspace=workspace)
    assert watched.to_json() == plain.to_json()
    assert watched.ok
    assert _joined(seen) == _joined([(entry.stream, entry.text) for entry in watched.logs])
    # Frame streams keep their order among themselves (raw fd1 arrives on its own pipe).
    framed = [text for stream, text in seen if stream != "fd1"]
    assert "".join(framed) == "one\ntwo\nWARNING:app:three\nfive\n"


@pytest.mark.asyncio
async def test_output_is_observed_while_the_program_runs(runtime_with: Factory, workspace: Path) -> None:
    """The program waits for a file the observer writes when it sees the first line: only an observer
    called as the output arrives lets it finish."""
    go = workspace / "go"

    def observer(stream: str, text: str) -> None:
        if "ready" in text:
            go.write_text("")

    code = "import os, time\nprint('ready')\nwhile not os.path.exists('go'):\n    time.sleep(0.01)\nreturn 'went'\n"
    outcome = await runtime_with(observer, timeout_s=60.0).run(code, workspace=workspace)
    assert outcome.ok and outcome.value == "went", outcome.to_json()


@pytest.mark.asyncio
async def test_nothing_over_the_output_budget_is_observed(runtime_with: Factory, workspace: Path) -> None:
    seen: list[tuple[str, str]] = []
    runtime = runtime_with(lambda stream, text: seen.append((stream, text)), max_output_bytes=2000)
    outcome = await runtime.run("for i in range(1000):\n    print('x' * 50)\n", workspace=workspace)
    assert outcome.failure is not None and outcome.failure.kind is OutcomeKind.OUTPUT_LIMIT
    assert _joined(seen) == _joined([(entry.stream, entry.text) for entry in outcome.logs])
    assert sum(len(text) for _, text in seen) < 2000


@pytest.mark.asyncio
async def test_an_observer_that_fails_is_dropped_and_the_run_goes_on(
    runtime_with: Factory, workspace: Path, caplog: pytest.LogCaptureFixture
) -> None:
    calls: list[str] = []

    def observer(stream: str, text: str) -> None:
        calls.append(text)
        raise OSError("the terminal went away")

    code = "import time\nprint('a')\ntime.sleep(0.1)\nprint('b')\nreturn 1\n"
    outcome = await runtime_with(observer).run(code, workspace=workspace)
    assert outcome.ok and outcome.value == 1
    assert "".join(entry.text for entry in outcome.logs) == "a\nb\n"
    assert len(calls) == 1
    assert "output observer failed" in caplog.text
