"""Previews at the model display boundary (the ``tool-result`` seam, ADR 0069).

What the model would see of a result — its presentation, else the JSON of its
value or error, as the host renders it — is measured against the preview
budget. Above it, the whole text goes to the host's spill store and the model
sees a bounded preview: head, a notice naming the handle and how to read the
rest, tail. The canonical value is never touched: only the presentation is
replaced. If the spill fails, the original display stays and the result says
the budget could not be met; a success never becomes a failure.
"""

from __future__ import annotations

from typing import Any

import orjson

from hookspecs import (
    PRESENTATION_TRUNCATED,
    SPILL_HANDLE,
    JSONObject,
    ResultAnnotation,
    SpillStore,
    TokenCounter,
    ToolResult,
)
from hookspecs.serialization import canonical_bytes
from ptc_plus.i18n import message
from ptc_plus.preview.fit import exceeds, fit_preview
from ptc_plus.preview.read_tool import READ_TOOL_NAME

METADATA_KEY = "preview"
"""The result metadata key describing a preview (or why none could be made)."""


def shown_text(result: ToolResult) -> str:
    """What a host shows the model of ``result``: its presentation, else its value or error as JSON."""
    if result.presentation is not None:
        return result.presentation
    if result.ok:
        return canonical_bytes(result.value).decode()
    error = result.error
    return orjson.dumps({"error": error.code if error else None, "message": error.message if error else None}).decode()


def preview_result(
    result: ToolResult, *, store: SpillStore | None, counter: TokenCounter, budget: int, lang: str
) -> ResultAnnotation | None:
    """The annotation for one top-level result the model is about to see, or ``None`` to leave it be.

    :param store: the host's spill store, passed only when the model can also reach the read
        tool (no preview without a working way to read the rest); ``None``: nothing is done.
    :param budget: the preview budget, in ``counter``'s unit.
    :param lang: the language of the notice (the model's).
    """
    if store is None or result.tool == READ_TOOL_NAME or result.metadata.get(PRESENTATION_TRUNCATED):
        # Reads are bounded by their own limit and are how the rest is read; a host's own preview is not wrapped.
        return None
    text = shown_text(result)
    if not exceeds(text, budget, counter):
        return None
    facts: dict[str, Any] = {"budget": budget, "unit": counter.unit, "chars": len(text)}
    try:
        handle = store.put(text)
    except OSError as error:
        return _unmet(text, facts, "spill-failed", f"{type(error).__name__}: {error}", lang)

    def notice(head: int, tail: int) -> str:
        return message(
            "ptc.preview.notice",
            lang,
            head=head,
            tail=tail,
            chars=len(text),
            omitted=len(text) - head - tail,
            handle=handle,
            offset=head,
            tool=READ_TOOL_NAME,
        )

    preview = fit_preview(text, budget, counter, notice)
    if preview is None:
        return _unmet(text, facts, "budget-too-small", "", lang)
    facts.update(handle=handle, offset=preview.head, head=preview.head, tail=preview.tail, tokens=preview.tokens)
    metadata: JSONObject = {METADATA_KEY: facts, PRESENTATION_TRUNCATED: True, SPILL_HANDLE: handle}
    return ResultAnnotation(metadata=metadata, presentation=preview.text)


def _unmet(text: str, facts: dict[str, Any], reason: str, detail: str, lang: str) -> ResultAnnotation:
    """The original display kept whole, with one line saying the budget was not met and why."""
    facts.update(unmet=reason, detail=detail)
    line = message(f"ptc.preview.unmet.{reason}", lang, budget=facts["budget"], unit=facts["unit"], detail=detail)
    return ResultAnnotation(metadata={METADATA_KEY: facts}, presentation=f"{text}\n{line}")
