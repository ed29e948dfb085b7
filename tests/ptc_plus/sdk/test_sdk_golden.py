"""Golden test: the real-world MCP corpus renders to exactly the checked-in SDK text.

Regenerate after an intended change with ``PTC_UPDATE_GOLDEN=1 pytest tests/ptc_plus/sdk/test_sdk_golden.py``
and review the diff.
"""

from __future__ import annotations

import ast
import os
from pathlib import Path

from hookspecs.types import ToolSpec
from ptc_plus.sdk import render_sdk
from ptc_plus.sdk.tools_file import load_tool_specs

DATA = Path(__file__).resolve().parents[2] / "data"
GOLDEN = DATA / "golden" / "mcp_corpus_sdk.py.txt"


def corpus() -> list[ToolSpec]:
    return [spec for path in sorted((DATA / "mcp").glob("*.json")) for spec in load_tool_specs(path)]


def test_corpus_is_real_and_large_enough() -> None:
    specs = corpus()
    assert len(specs) >= 70
    assert len({s.source for s in specs}) >= 10
    assert any(s.output_schema for s in specs)


def test_corpus_renders_to_golden_text() -> None:
    text = render_sdk(corpus()).text
    if os.environ.get("PTC_UPDATE_GOLDEN"):
        GOLDEN.write_text(text, encoding="utf-8")
    assert text == GOLDEN.read_text(encoding="utf-8")


def test_corpus_sdk_runs_as_a_module() -> None:
    text = render_sdk(corpus()).text
    namespace: dict[str, object] = {}
    exec(compile(ast.parse(text), "<sdk>", "exec"), namespace)
    assert callable(namespace["convert_time"])
    assert "TimeResult" in namespace


def test_shared_type_is_declared_once() -> None:
    text = render_sdk([s for s in corpus() if s.source == "mcp:time"]).text
    assert text.count("class TimeResult(TypedDict):") == 1
    assert "-> TimeResult:" in text and "source: TimeResult" in text


def test_input_order_does_not_matter() -> None:
    specs = corpus()
    assert render_sdk(specs).text == render_sdk(list(reversed(specs))).text
