"""Errors the runtime raises on purpose (codes PTC-2000..PTC-2099).

Only precondition misuse raises: bad configuration, a bad model-facing
argument, a run after unload. A program's own failure is never raised; it is
a :class:`~ptc_plus.runtime.outcome.RunFailure` with one of the outcome kinds
(whose codes are PTC-2101..PTC-2108, see :mod:`ptc_plus.runtime.outcome`).
"""

from __future__ import annotations

from ptc_plus.errors import PtcError


class InvalidLimits(PtcError):
    """A runtime limit or option is out of range."""

    code = "PTC-2001"


class InvalidTimeout(PtcError):
    """The model asked for a timeout that is not a positive number of seconds."""

    code = "PTC-2002"


class RuntimeClosed(PtcError):
    """The runtime was shut down; it refuses new runs."""

    code = "PTC-2003"


# PTC-2004 (a ``--tools`` value naming no tool set) is retired: every command reads ``--tools`` through
# ``ptc_plus.sdk.load_tool_set``, whose errors are PTC-3001 and PTC-3002 (ADR 0064).


class DiscoveryUnavailable(PtcError):
    """The session offers no discovery (no provider, or it returned no snapshot); ``capabilities.*`` says so."""

    code = "PTC-2005"


class DiscoveryFailed(PtcError):
    """Discovery broke on the host side (param ``detail``); the program gets it as a catchable error."""

    code = "PTC-2006"


class ArgumentConflict(PtcError):
    """A program gave one argument twice: by its SDK name and by its real name (params ``tool``, ``name``,
    ``identifier``)."""

    code = "PTC-2007"


class DispatchFailed(PtcError):
    """The host's ``dispatch`` raised instead of returning a result for a nested call (params ``tool``,
    ``detail``): the call settles with this error, so the program can go on instead of waiting for a reply
    that would never come."""

    code = "PTC-2009"


class DiscoveryRequestTooLarge(PtcError):
    """A ``capabilities.*`` request exceeds the host's request bounds (params ``method``, ``argument``,
    ``size``, ``limit``); the program gets it as a catchable ``DiscoveryError`` with this code."""

    code = "PTC-2008"
