"""Errors of the session's slash command and refresh (codes PTC-6001..PTC-6099; previews use 61xx)."""

from __future__ import annotations

from ptc_plus.errors import PtcError


class RefreshFailed(PtcError):
    """A refresh could not be applied; the live plan is untouched."""


class RefreshNotPrepared(RefreshFailed):
    """Today's facts gave no candidate plan (params: ``detail``)."""

    code = "PTC-6004"


class RefreshInvalid(RefreshFailed):
    """A projection of the candidate plan failed validation (params: ``projection``, ``detail``)."""

    code = "PTC-6001"


class RefreshNotPersisted(RefreshFailed):
    """The candidate could not be written to the session's records (params: ``detail``)."""

    code = "PTC-6002"


class CommandArguments(PtcError):
    """``/capabilities`` got arguments it does not take (params: ``args``)."""

    code = "PTC-6003"
