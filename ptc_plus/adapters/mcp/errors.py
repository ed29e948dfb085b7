"""Errors of MCP servers used as capability sources (codes PTC-7000..PTC-7099).

Each is the failure of the one call (or the one session opening) that needed
the server, never of the session: a program sees it as a ``ToolCallError``
naming the tool, ``/capabilities`` as a diagnostic.
"""

from __future__ import annotations

from typing import Any

from ptc_plus.errors import PtcError


class ServerUnavailable(PtcError):
    """The server could not be started or did not complete the MCP handshake."""

    code = "PTC-7001"


class CommandNotFound(ServerUnavailable):
    """The server's ``command`` names no executable on the PATH the server gets (or no such file)."""

    code = "PTC-7020"


class ServerExited(ServerUnavailable):
    """The server's process ended before it completed the MCP handshake: its exit code and last stderr lines."""

    code = "PTC-7021"


class HandshakeTimedOut(ServerUnavailable):
    """The server's process runs but did not complete the MCP handshake in time."""

    code = "PTC-7022"


class SnapshotUnreadable(PtcError):
    """A server's saved ``tools/list`` snapshot does not decode: it is not used, and the server is started."""

    code = "PTC-7023"


class ServerCrashed(PtcError):
    """The server's process ended while a request to it was open; the next call starts it again."""

    code = "PTC-7002"


class RequestTimedOut(PtcError):
    """No answer within the server's ``timeout_s``: the call ends then and the server is restarted for the next."""

    code = "PTC-7003"


class ServerGaveUp(PtcError):
    """The server failed too many times in a row; no restart is tried until the rest is over.

    Params: ``server``, ``failures``, ``seconds`` (until the next try), ``retry_at`` (UTC), and
    ``reason``: the last failure's message, rendered in the locale the message is asked in.
    """

    code = "PTC-7004"

    def __init__(self, *, last: PtcError, **params: Any) -> None:
        self.last = last  # before the base class renders the message
        super().__init__(**params, reason=last.message())

    def message(self, lang: str | None = None) -> str:
        with_reason = PtcError(self.code, **{**self.params, "reason": self.last.message(lang)})
        return with_reason.message(lang)


class ToolReportedError(PtcError):
    """The tool answered with ``is_error``: its own failure, worded by the server."""

    code = "PTC-7005"


class NameTaken(PtcError):
    """A server's tool has the name of a tool another source already offers: it is left out."""

    code = "PTC-7006"


class NoResourceServer(PtcError):
    """A resource read or list names no server of this session that offers resources (or is ambiguous)."""

    code = "PTC-7007"


class RequestFailed(PtcError):
    """The server answered a request with a protocol error."""

    code = "PTC-7009"
