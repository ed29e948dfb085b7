"""The output ledger: what is captured, in which order, and how bytes are counted."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from ptc_plus.runtime.ledger import HostLedger, OutputBudgetExceeded
from ptc_plus.runtime.outcome import OutcomeKind

from .conftest import RuntimeFactory

PROGRAM = (
    "import logging, sys\n"
    "print('one')\n"
    "sys.stderr.write('two\\n')\n"
    "logging.getLogger('app').warning('three')\n"
    "sys.stdout.write('four\\n')\n"
    "print('五', file=sys.stderr)\n"
    "logging.info('six')\n"
    "sys.stdout.buffer.write('seven\\n'.encode())\n"
    "return 'done'\n"
)


@pytest.mark.asyncio
async def test_streams_are_captured_in_order(make_runtime: RuntimeFactory, workspace: Path) -> None:
    outcome = await make_runtime().run(PROGRAM, workspace=workspace)
    assert outcome.ok, outcome.to_json()
    assert [(entry.stream, entry.text) for entry in outcome.logs] == [
        ("stdout", "one\n"),
        ("stderr", "two\n"),
        ("log", "WARNING:app:three\n"),
        ("stdout", "four\n"),
        ("stderr", "五\n"),
        ("log", "INFO:root:six\n"),
        ("stdout", "seven\n"),
    ]


@pytest.mark.asyncio
async def test_raw_descriptor_output_is_captured_and_bounded(make_runtime: RuntimeFactory, workspace: Path) -> None:
    code = (
        "import os, subprocess, sys\n"
        "subprocess.run([sys.executable, '-c', 'print(\"from child\")'])\n"
        "os.write(2, b'raw\\n')"
    )
    outcome = await make_runtime().run(code, workspace=workspace)
    assert outcome.ok, outcome.to_json()
    logs = {entry.stream: entry.text for entry in outcome.logs}
    assert logs == {"fd1": "from child\n", "fd2": "raw\n"}


def _cost(outcome_logs: list[dict[str, str]], value: object) -> int:
    return len(orjson.dumps(outcome_logs)) + len(orjson.dumps(value))


@pytest.mark.asyncio
async def test_budget_counts_the_serialized_form_exactly(make_runtime: RuntimeFactory, workspace: Path) -> None:
    # Quotes, backslashes, control characters and non-ASCII all cost their escaped/encoded size.
    code = "print('a\"b\\\\c\\x01 é 中')\nimport sys\nsys.stderr.write('e')\nreturn {'k': 'v\"'}"
    first = await make_runtime().run(code, workspace=workspace)
    assert first.ok
    exact = _cost([entry.to_json() for entry in first.logs], first.value)
    fits = await make_runtime(max_output_bytes=exact).run(code, workspace=workspace)
    assert fits.ok, fits.to_json()
    over = await make_runtime(max_output_bytes=exact - 1).run(code, workspace=workspace)
    assert over.failure is not None and over.failure.kind is OutcomeKind.OUTPUT_LIMIT


def test_host_ledger_merges_and_refuses_past_the_budget() -> None:
    ledger = HostLedger(max_bytes=60)
    ledger.add("stdout", "ab")
    ledger.add("stdout", "cd")
    assert ledger.used == len(orjson.dumps([{"stream": "stdout", "text": "abcd"}]))
    with pytest.raises(OutputBudgetExceeded):
        ledger.add("stderr", "x" * 40)
    assert [entry.text for entry in ledger.entries()] == ["abcd"]
    assert ledger.over


class _CountingText(str):
    """Text that counts how often it is concatenated (the ledger must never grow a string per chunk)."""

    concatenations = 0

    def __add__(self, other: str) -> str:
        _CountingText.concatenations += 1
        return _CountingText(str.__add__(self, other))


def test_many_chunks_are_joined_once_in_stream_order() -> None:
    ledger = HostLedger(1 << 30)
    _CountingText.concatenations = 0
    for index in range(2000):
        ledger.add("stdout", _CountingText(f"o{index};"))
        if index % 500 == 499:
            ledger.add("stderr", _CountingText(f"e{index};"))
    entries = [(entry.stream, entry.text) for entry in ledger.entries()]
    assert _CountingText.concatenations == 0
    assert [stream for stream, _ in entries] == ["stdout", "stderr"] * 4
    assert entries[0][1] == "".join(f"o{index};" for index in range(500))
    assert entries[1][1] == "e499;"
    assert sum(len(text) for _, text in entries) == len("".join(text for _, text in entries))
