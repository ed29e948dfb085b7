"""Errors only the command line raises."""

from __future__ import annotations

from ptc_plus.errors import PtcError, UsageError


class WorkspaceNotADirectory(UsageError):
    """``--workspace`` names something that is not an existing directory (nothing is created)."""

    code = "PTC-1002"


class SettingsPortUnavailable(PtcError):
    """``ptc-plus settings --port N``: 127.0.0.1:N cannot be listened on (taken, or not allowed)."""

    code = "PTC-1004"


class SessionLiveElsewhere(PtcError):
    """The settings page was asked to refresh a session another process holds open (its log's lock): the
    transition needs the session's host, and that host is the other process (ADR 0130)."""

    code = "PTC-6005"


class SessionToolsElsewhere(PtcError):
    """The settings page was asked to refresh a session whose frozen plan holds host tools the page cannot
    lend it (a ``ptc-plus chat --tools FILE`` session): refreshed here, they would vanish from its plan."""

    code = "PTC-6008"


class SessionNotListed(PtcError):
    """The settings page was asked to refresh a session that is not one of the workspace's listed sessions."""

    code = "PTC-6006"


class ConversationRefreshedByLlm(PtcError):
    """The settings page was asked to refresh an llm conversation: its host's tools are llm's, which only
    ``llm capabilities refresh`` loads (the page sits below the llm plugin, ADR 0130)."""

    code = "PTC-6007"
