"""Errors of the llm plugin (codes PTC-7201..PTC-7299; ADR 0074)."""

from __future__ import annotations

from ptc_plus.errors import PtcError


class SessionNotOpened(PtcError):
    """The conversation's session could not be opened on the embedded host (params: ``detail``)."""

    code = "PTC-7201"


class NestedCallCancelled(PtcError):
    """llm's approval (``--ta``) refused a nested call (params: ``tool``, ``reason``)."""

    code = "PTC-7202"


class NoConversation(PtcError):
    """``llm capabilities`` found no conversation to act on (params: ``conversation``)."""

    code = "PTC-7203"


class NoSession(PtcError):
    """The conversation never used PTC Plus, so it has no plan yet (params: ``conversation``)."""

    code = "PTC-7204"


class RunFailed(Exception):
    """A top-level call the plugin answered with a failure; llm shows its text as the tool's error."""


__all__ = ["NestedCallCancelled", "NoConversation", "NoSession", "RunFailed", "SessionNotOpened"]
