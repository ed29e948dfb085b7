"""Errors of the capability catalog and discovery (codes PTC-3100..3999)."""

from __future__ import annotations

from ptc_plus.errors import PtcError


class InvalidBudget(PtcError):
    """A discovery budget that is not a positive whole number of tokens (param ``budget``)."""

    code = "PTC-3101"


class DuplicateCapability(PtcError):
    """Two capabilities with one identity were offered to one catalog (param ``identity``)."""

    code = "PTC-3102"


class InvalidKeywordIndex(PtcError):
    """A keyword index file is unreadable or malformed (params ``path``, ``detail``)."""

    code = "PTC-3103"


class CatalogUnavailable(PtcError):
    """The workspace's catalog could not be built (param ``detail``)."""

    code = "PTC-3104"


class InvalidDiscoveryArgument(PtcError):
    """A discovery call got an argument of the wrong shape (params ``name``, ``detail``)."""

    code = "PTC-3105"
