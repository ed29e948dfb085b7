"""The chat host's approval step: tools named with ``--approve`` run only after the person says yes.

The host contract has no per-tool "needs approval" mark; the reference host
takes an approver (its guard), so the chat host marks tools itself. Each call
of a marked tool — the model's own or a program's nested one — is asked about
on the terminal before it is dispatched; with no terminal to ask (one-shot
``-p``, piped input) it is refused, never run unasked. The question blocks the
session while the person answers, as an approval should.
"""

from __future__ import annotations

from collections.abc import Callable

import click

from hookspecs import Refusal, ToolCall, ToolSpec
from hookspecs.reference import Approver
from hookspecs.serialization import canonical_bytes
from ptc_plus.i18n import message

ALL = "all"
"""``--approve all``: every tool the model or a program calls, ``run_code`` included."""
MODEL_LANG = "en"
"""A refusal's reason reaches the model: English, whatever the person's locale."""

Ask = Callable[[str], bool]


def marked_tools(values: tuple[str, ...]) -> frozenset[str]:
    """The tool names of ``--approve`` (repeatable, comma-separated; ``all`` for every tool)."""
    return frozenset(name.strip() for value in values for name in value.split(",") if name.strip())


def terminal_ask(question: str) -> bool:
    """Ask on the terminal; anything but yes is no."""
    return click.confirm(question, default=False, err=True)


def approver(marked: frozenset[str], ask: Ask | None) -> Approver | None:
    """The host's approver for ``marked`` tools (``None`` when nothing is marked); ``ask=None``: nobody to ask."""
    if not marked:
        return None

    def approve(call: ToolCall, spec: ToolSpec) -> Refusal | None:
        if ALL not in marked and spec.name not in marked:
            return None
        if ask is None:
            return Refusal(code="not-approved", reason=message("cli.chat.approval.nobody", MODEL_LANG, tool=spec.name))
        arguments = canonical_bytes(call.arguments).decode()
        shown = arguments if len(arguments) <= 200 else arguments[:199] + "…"
        if ask(message("cli.chat.approval.ask", tool=spec.name, arguments=shown)):
            return None
        return Refusal(code="not-approved", reason=message("cli.chat.approval.refused", MODEL_LANG, tool=spec.name))

    return approve
