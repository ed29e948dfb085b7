"""What a front door hands the client in the model's seat (ADR 0073, ADR 0121): a tool, and a call's answer.

Both front doors put another program where a model would be (mcp-serve's MCP client, llm's model) and show
it the same two things: each tool as that program registers it, and each call's result followed by what the
plugin owes the model at the step after the call. One pair serves both doors; each door maps it onto its
own wire (MCP content blocks, llm's tool return).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs


@attrs.frozen(kw_only=True)
class SeatTool:
    """One tool as the door offers it: its name, its description (with the PTC text where it belongs), its schema."""

    name: str
    description: str
    input_schema: Mapping[str, Any]


@attrs.frozen(kw_only=True)
class SeatAnswer:
    """One call as the model reads it: the result, whether it succeeded, then what the plugin owes it."""

    text: str
    ok: bool
    owed: tuple[str, ...] = ()
    """Context messages the plugin delivers at the step after the call, in order."""

    def full_text(self) -> str:
        """The result and what is owed after it, as one text (a door with a single text to return)."""
        return "\n\n".join((self.text, *self.owed))
