"""Assembling groups stubs by source in one pass: the text equals the per-source scan it replaced."""

from __future__ import annotations

from collections.abc import Sequence

from hookspecs.types import ToolSpec
from ptc_plus.sdk import RenderedTool, one_line, render_sdk
from ptc_plus.sdk.module import _SEPARATOR, distinct_types, module_text


def _reference(tools: Sequence[RenderedTool]) -> str:
    """The former quadratic grouping, kept here as the oracle."""
    blocks = [decl.text for decl in distinct_types(tools)]
    for source in sorted({t.source for t in tools}):
        members = sorted((t for t in tools if t.source == source), key=lambda t: (t.name, t.function))
        blocks.append(f"# ── {one_line(source)} ──\n" + _SEPARATOR.join(t.stub for t in members))
    return module_text(_SEPARATOR.join(blocks) + "\n")


def test_interleaved_sources_render_like_the_reference() -> None:
    item = {"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]}
    specs = [
        ToolSpec(name=f"tool_{n % 7}", description=f"Does {n}.", input_schema=item, source=f"mcp:s{n % 5}")
        for n in range(35, 0, -1)
    ]
    sdk = render_sdk(specs)
    assert sdk.text == _reference(sdk.tools)
    assert sdk.text == render_sdk(list(reversed(specs))).text
