"""Errors of the usage statistics store (codes PTC-5000..PTC-5099).

Each state a store can be in that costs statistics their vote has its own
code, so the plan, ``/capabilities`` and ``ptc-plus stats`` can say which
one: no store yet (5001), damaged (5002), written by a newer release (5003).
"""

from __future__ import annotations

from ptc_plus.errors import PtcError


class StatisticsError(PtcError):
    """Root of statistics errors (param: ``detail``)."""

    code = "PTC-5000"


class StatisticsMissing(StatisticsError):
    """No statistics recorded here yet: no vote, nothing guessed (param: ``file``). Never raised by the store;
    it is the :attr:`StoreView.problem` of a missing store."""

    code = "PTC-5001"


class StatisticsStoreCorrupt(StatisticsError):
    """The store is truncated, not JSON or not the format (params: ``file``, ``detail``, ``kept``: where a copy
    was put aside). Statistics lose their vote; the file is never overwritten until ``reset``."""

    code = "PTC-5002"


class StatisticsStoreFutureVersion(StatisticsError):
    """The store was written by a newer release (params: ``file``, ``found``, ``supported``); left untouched."""

    code = "PTC-5003"


class StatisticsStoreUnwritable(StatisticsError):
    """Recording failed for a system reason: permissions, a full disk, a symlink in the path (``file``,
    ``detail``). The store is unchanged."""

    code = "PTC-5004"


__all__ = [
    "StatisticsError",
    "StatisticsMissing",
    "StatisticsStoreCorrupt",
    "StatisticsStoreFutureVersion",
    "StatisticsStoreUnwritable",
]
