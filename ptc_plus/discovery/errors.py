"""Errors of discovery (codes PTC-3100..3999, shared with :mod:`ptc_plus.capabilities.errors`)."""

from __future__ import annotations

from ptc_plus.errors import PtcError


class InvalidBudget(PtcError):
    """A discovery budget that is not a positive whole number of tokens (param ``budget``)."""

    code = "PTC-3101"


class InvalidKeywordIndex(PtcError):
    """A keyword index file is unreadable or malformed (params ``path``, ``detail``)."""

    code = "PTC-3103"


class InvalidDiscoveryArgument(PtcError):
    """A discovery call got an argument of the wrong shape (params ``name``, ``detail``)."""

    code = "PTC-3105"
