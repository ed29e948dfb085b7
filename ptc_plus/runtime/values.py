"""Lossless JSON values on the host side: the same rules the child applies (ADR 0011).

The rules live in :mod:`ptc_plus.runtime.worker.lossless`, which the child
imports too; this module is the host's name for them.
"""

from __future__ import annotations

from ptc_plus.runtime.worker.lossless import INT_MAX, INT_MIN, MAX_DEPTH, NotLossless, check

__all__ = ["INT_MAX", "INT_MIN", "MAX_DEPTH", "NotLossless", "check", "is_lossless"]


def is_lossless(value: object) -> bool:
    try:
        check(value)
    except NotLossless:
        return False
    return True
