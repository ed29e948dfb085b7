"""Errors of plan computation (codes PTC-4200..PTC-4299)."""

from __future__ import annotations

from ptc_plus.errors import PtcError


class PlanInputInvalid(PtcError):
    """The plan input breaks a precondition (params: ``detail``): a programming error of the caller."""

    code = "PTC-4201"
