"""Bounded previews of large results and reading the rest back (ADR 0069).

- :mod:`.fit` — the preview itself: head, notice, tail within a token budget (pure);
- :mod:`.seam` — the ``tool-result`` seam's decision: measure, spill, annotate or keep and flag;
- :mod:`.read_tool` — ``read_spill``, reading the spill store by character offset;
- :mod:`.errors` — PTC-61xx.
"""

from __future__ import annotations

from ptc_plus.preview.errors import ReadTooLarge, SpillUnavailable, SpillUnknown, SpillUnreadable
from ptc_plus.preview.fit import Preview, exceeds, fit_preview
from ptc_plus.preview.read_tool import DEFAULT_READ_CHARS, MAX_READ_CHARS, READ_TOOL_NAME, read_spill_definition
from ptc_plus.preview.seam import METADATA_KEY, preview_result, shown_text

__all__ = [
    "DEFAULT_READ_CHARS",
    "MAX_READ_CHARS",
    "METADATA_KEY",
    "READ_TOOL_NAME",
    "Preview",
    "ReadTooLarge",
    "SpillUnavailable",
    "SpillUnknown",
    "SpillUnreadable",
    "exceeds",
    "fit_preview",
    "preview_result",
    "read_spill_definition",
    "shown_text",
]
