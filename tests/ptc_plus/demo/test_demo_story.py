"""The demo as a person reads it at an 80-column terminal: the program whole and highlighted, events in the
order they happened, no line wider than the terminal, and a closing line that measures code mode against the
same questions answered natively."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ptc_plus.demo import CODE, NATIVE, View, run_demo
from ptc_plus.demo.view import PROGRAM_GUTTER, program_lines, wrapped
from ptc_plus.evaluation.demo_bill import DemoBill
from tests.terminal import terminal_output

CLI = str(Path(sys.executable).with_name("ptc-plus"))
ANSI = re.compile(r"\x1b\[[0-9;]*m")
SCRIPT = Path(__file__).parents[3] / "ptc_plus" / "demo" / "ptc.jsonl"


def _first_program() -> str:
    first = orjson.loads(SCRIPT.read_text(encoding="utf-8").splitlines()[0])
    return str(first["tool_calls"][0]["arguments"]["code"])


def _demo_on_a_terminal(tmp_path: Path, *args: str, columns: int = 80) -> str:
    """``ptc-plus demo`` written to a pseudo-terminal ``columns`` wide, as a user sees it."""
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "NO_COLOR")}
    env.update(TERM="xterm-256color", PTC_LOCALE="en", XDG_CONFIG_HOME=str(tmp_path / "xdg"), TMPDIR=str(tmp_path))
    return terminal_output([CLI, "demo", *args], env, columns=columns, timeout=300)


def test_at_80_columns_the_program_is_whole_highlighted_and_every_line_fits(tmp_path: Path) -> None:
    screen = _demo_on_a_terminal(tmp_path)
    plain = ANSI.sub("", screen).splitlines()
    assert plain and max(len(line) for line in plain) <= 80, max(plain, key=len)
    if not any(line.startswith("Code mode is on") for line in plain):
        pytest.skip("code mode is off on this machine (no usable sandbox): there is no program to show")
    coloured = [line for line in screen.splitlines() if line.startswith(PROGRAM_GUTTER)]
    assert any(ANSI.search(line) for line in coloured), "a terminal gets the program coloured"
    # The first program, whole: its text comes back from the gutter lines, only the wrapping spaces differ.
    shown = [line[len(PROGRAM_GUTTER) :] for line in plain if line.startswith(PROGRAM_GUTTER)]
    program = _first_program()
    assert re.sub(r"\s", "", "".join(shown)).startswith(re.sub(r"\s", "", program))
    # The context message the program's search produced comes after the program that caused it.
    result = next(i for i, line in enumerate(plain) if line.startswith("  ← ok: the program's tool calls:"))
    expansion = next(i for i, line in enumerate(plain) if "[ptc-plus:expansion:1]" in line)
    assert result < expansion
    assert any(line.strip() == "printed: discovered convert_units (179 o200k_base tokens)" for line in plain)
    # The first screen speaks plainly: no call ids, plugin names or prompt sections unless asked for.
    text = "\n".join(plain)
    assert "call-1-1-0@" not in text and "Plugins loaded" not in text and "System prompt sections" not in text
    assert re.search(r"code mode 4 model requests, [\d,]+ input tokens", text.replace("\n  ", " "))


def test_verbose_shows_the_details_and_still_fits(tmp_path: Path) -> None:
    plain = ANSI.sub("", _demo_on_a_terminal(tmp_path, "--verbose", columns=100)).splitlines()
    assert max(len(line) for line in plain) <= 100
    text = "\n".join(plain)
    assert "Plugins loaded" in text and "System prompt sections" in text
    if "Code mode is on" in text:
        assert "call-1-1-0@" in text


def test_piped_output_has_no_colour(tmp_path: Path) -> None:
    env = {**os.environ, "PTC_LOCALE": "en", "XDG_CONFIG_HOME": str(tmp_path / "xdg"), "TMPDIR": str(tmp_path)}
    done = subprocess.run([CLI, "demo"], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    assert not ANSI.search(done.stdout)


@pytest.mark.asyncio
async def test_the_closing_line_is_the_meter_of_both_sessions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PTC_LOCALE", "en")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    bill = DemoBill()
    lines: list[str] = []
    assert await run_demo(view=View(out=lines.append, width=sys.maxsize), bill=bill) == 0
    if not any(line.startswith("Code mode is on") for line in lines):
        pytest.skip("code mode is off on this machine: the demo has no twin to compare with")
    totals = bill.totals()
    code, native = totals[CODE], totals[NATIVE]
    (closing,) = [line for line in lines if line.startswith("What this cost")]
    assert f"code mode {code.requests} model requests, {code.input:,} input tokens" in closing
    assert f"{native.requests} requests, {native.input:,} input ({native.input_cached:,} cached)" in closing
    assert code.total is not None and native.total is not None
    assert f"code mode cost {code.total / native.total:.2f}x what native did" in closing
    # The twin is the fair native: its script sends the independent calls of a step in one response.
    recorded = bill.exchanges(NATIVE)
    assert len(recorded) == native.requests and len(recorded[0].answer.tool_calls) >= 3


@given(st.text(alphabet=st.sampled_from("ab cd\u2192 "), max_size=400), st.integers(min_value=40, max_value=120))
def test_wrapped_lines_never_exceed_the_width(text: str, width: int) -> None:
    for line in wrapped("  " + text, width):
        assert len(line) <= width


@given(
    st.lists(st.text(alphabet=st.sampled_from("xy =(\"'#"), max_size=150), min_size=1, max_size=6),
    st.integers(min_value=20, max_value=90),
)
def test_a_wrapped_program_loses_nothing_but_the_spaces_it_breaks_at(lines: list[str], width: int) -> None:
    code = "\n".join(lines)
    shown = ["".join(value for _, value in segments) for segments in program_lines(code, width)]
    assert all(len(line) <= max(width, 20) for line in shown)
    assert re.sub(r"\s", "", "".join(shown)) == re.sub(r"\s", "", code)
