"""Errors of the capability catalog (codes PTC-3100..3999, shared with :mod:`ptc_plus.discovery.errors`)."""

from __future__ import annotations

from ptc_plus.errors import PtcError


class DuplicateCapability(PtcError):
    """Two capabilities with one identity were offered to one catalog (param ``identity``)."""

    code = "PTC-3102"


class CatalogUnavailable(PtcError):
    """The workspace's catalog could not be built (param ``detail``)."""

    code = "PTC-3104"
