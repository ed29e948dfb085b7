"""The prompt's answers for a session: the bootstrap section, the model's native tools, the skill catalog.

Each is a function of the session's state and its frozen view, and a stable
prefix: the bootstrap never mentions the plan, the native tools follow the
frozen plan, the skill catalog is plan-independent.
"""

from __future__ import annotations

from collections.abc import Sequence

from hookspecs import PromptSection, ToolSpec
from ptc_plus.session.projection import bootstrap_section
from ptc_plus.session.state import SessionState


def prompt_sections(state: SessionState | None) -> list[PromptSection]:
    """The bootstrap section under code mode (fixed language: the system prompt stays a stable prefix)."""
    return [bootstrap_section()] if state is not None and state.ptc else []


def model_tools(state: SessionState | None, tools: Sequence[ToolSpec]) -> list[str] | None:
    """Under ``ptc``: ``run_code`` and unmanaged tools; under ``both`` also the plan's ``full`` tools.

    Like the system prompt, the list must be a stable prefix. Under
    ``both`` it follows the frozen plan, so it never moves within a
    session; between sessions the ``full`` set follows the config and the
    host's view, and statistics would move it only once they vote (ADR 0037).
    """
    if state is None or not state.ptc or state.membership is None:
        return None
    return state.membership.native_tools(tools)


def skill_catalog(state: SessionState | None) -> list[str] | None:
    """Under code mode the plan's catalog message carries skill lines, so the host lists none
    (a plan-independent answer: the system prompt stays a stable prefix)."""
    if state is None or not state.ptc or state.environment is None:
        return None
    return []
