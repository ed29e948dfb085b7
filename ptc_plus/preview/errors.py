"""Errors of reading spilled text back (PTC-61xx: previews; 60xx is refresh)."""

from __future__ import annotations

from ptc_plus.errors import PtcError


class SpillUnknown(PtcError):
    """The handle names no spilled text this host keeps (never one, or evicted since)."""

    code = "PTC-6101"


class ReadTooLarge(PtcError):
    """A read asked for more characters than one read may return."""

    code = "PTC-6102"


class SpillUnavailable(PtcError):
    """The host lends no spill store, so nothing was spilled and nothing can be read."""

    code = "PTC-6103"


class SpillUnreadable(PtcError):
    """The host's spill store failed to read the handle now (an I/O error, not an unknown handle)."""

    code = "PTC-6104"
