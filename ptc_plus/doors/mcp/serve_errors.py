"""Errors of ``ptc-plus mcp-serve`` (codes PTC-7101..PTC-7199; ADR 0073)."""

from __future__ import annotations

from ptc_plus.errors import PtcError


class ServeNotOpened(PtcError):
    """The served session could not be opened on the embedded host (params: ``detail``)."""

    code = "PTC-7101"


class SearchUnavailable(PtcError):
    """``search_capabilities`` was called in a session without code mode (params: ``presentation``)."""

    code = "PTC-7102"


class SearchArguments(PtcError):
    """``search_capabilities`` got arguments of the wrong shape (params: ``detail``)."""

    code = "PTC-7103"
