"""What llm knows about the call in progress and does not pass to a tool: its conversation and callbacks.

llm has no hook around tool execution and hands a tool implementation only
its arguments (and, on request, the :class:`llm.ToolCall`). The conversation
a call belongs to, and the chain's ``before_call`` (``--ta``) and
``after_call`` (``--td``) callbacks, are locals of llm's own frames beneath
the call: ``Response.execute_tool_calls`` (``self.conversation``,
``before_call``, ``after_call``) and the ``prompt``/``chat`` commands
(``conversation``, ``tools``) when llm asks for its tools. This module is the one place
that reads them (ADR 0074); every reader degrades to "none found", never fails.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import FrameType
from typing import Any

import attrs
from llm.models import _BaseConversation, _BaseResponse

EXECUTE_TOOL_CALLS = "execute_tool_calls"


@attrs.frozen(kw_only=True)
class ChainContext:
    """The conversation a tool call belongs to (``None``: a call outside any conversation) and its callbacks."""

    conversation_id: str | None = None
    before_call: Callable[..., Any] | None = None
    after_call: Callable[..., Any] | None = None


def _frames() -> list[FrameType]:
    frame: FrameType | None = sys._getframe(1)
    found: list[FrameType] = []
    while frame is not None:
        found.append(frame)
        frame = frame.f_back
    return found


def current_call() -> ChainContext:
    """Inside a tool implementation: the nearest ``execute_tool_calls`` of an llm response beneath it."""
    for frame in _frames():
        owner = frame.f_locals.get("self")
        if frame.f_code.co_name == EXECUTE_TOOL_CALLS and isinstance(owner, _BaseResponse):
            conversation = owner.conversation
            return ChainContext(
                conversation_id=conversation.id if conversation is not None else None,
                before_call=frame.f_locals.get("before_call"),
                after_call=frame.f_locals.get("after_call"),
            )
    return ChainContext()


@attrs.frozen(kw_only=True)
class Gathering:
    """Why llm is gathering its tools: for a conversation (``None``: a listing), and the ``-T`` names asked for
    (``None``: not known, so any may be)."""

    conversation_id: str | None = None
    requested: frozenset[str] | None = None


def current_gathering() -> Gathering:
    """While llm gathers its tools: the conversation the command is about to prompt, and the tools it names."""
    for frame in _frames():
        conversation = frame.f_locals.get("conversation")
        if isinstance(conversation, _BaseConversation):
            named = frame.f_locals.get("tools")
            requested = None
            if isinstance(named, list | tuple) and all(isinstance(n, str) for n in named):
                requested = frozenset(n.split("(", 1)[0].strip() for n in named)
            return Gathering(conversation_id=str(conversation.id), requested=requested)
    return Gathering()


def latest_conversation() -> str | None:
    """The id of the most recent logged conversation (what ``llm -c`` continues), if there is one."""
    from llm.cli import load_conversation

    try:
        conversation = load_conversation(None)
    except Exception:  # no database yet, or an llm that changed: no conversation
        return None
    return str(conversation.id) if conversation is not None else None


__all__ = ["ChainContext", "Gathering", "current_call", "current_gathering", "latest_conversation"]
